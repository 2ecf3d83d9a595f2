"""What the user is told about each index job's outcome: one message per failure episode.

Worker thread only (its set of roots logged as busy is not shared).
"""

from __future__ import annotations

import logging

from kbls.daemon.answers import SafeListener
from kbls.daemon.jobs import Job, Outcome
from kbls.daemon.roots import Root, RootRegistry
from kbls.daemon.status import StatusReporter
from kbls.errors import StoreFullError, StoreReadOnlyError
from kbls.results import IndexReport

log = logging.getLogger(__name__)


class JobNotices:
    """Messages, logs and status after each job; the failure reason kept on the root."""

    def __init__(self, registry: RootRegistry, reporter: StatusReporter, listener: SafeListener) -> None:
        self._registry = registry
        self._reporter = reporter
        self._listener = listener
        #: roots whose "another process is indexing" was logged.
        self._busy_logged: set[str] = set()

    def busy(self, root: Root) -> None:
        """Another process holds the writer lock: logged once per episode."""
        if root.key not in self._busy_logged:
            self._busy_logged.add(root.key)
            message = f"another kbls process is indexing {root.folder}; waiting for it"
            self._listener.log(logging.INFO, f"kbls: {message}")
            self._reporter.progress_note(message)
        self._reporter.emit()

    def failed(
        self, root: Root, outcome: Outcome, reason: str, error: Exception | None, delay: float | None
    ) -> None:
        """A job failed and waits `delay` s for its retry: the reason kept, the user told once."""
        first = self._registry.set_error(root, reason) is None
        log.error("indexing %s failed (retry in %s s): %s", root.folder, delay, reason)
        if first:  # one message per episode; kb/status keeps the reason
            if outcome is Outcome.FULL:
                when = _when_indexing_resumes(error)
                text = f"kbls: {reason}. Searches answer from what is indexed; indexing resumes {when}."
            else:
                text = (
                    f"kbls: indexing {root.folder} failed: {reason}. Searches answer from what is already indexed; "
                    f"kbls tries again in {delay or 0:.0f} s, then less often, and catches up on its own once this is fixed."
                )
            self._listener.show(logging.ERROR, text)
        self._reporter.emit(force=True)

    def done(self, root: Root, job: Job, report: IndexReport) -> None:
        """A job succeeded: counts updated, a recovery said, the run summarised."""
        self._busy_logged.discard(root.key)
        if self._registry.set_error(root, None) is not None:
            self._listener.show(logging.INFO, f"kbls: the store of {root.folder} can be written again; indexing resumed")
        self._registry.set_counts(root, report.files, report.chunks)
        if report.changed or report.deleted or job.full:
            self._listener.log(
                logging.INFO,
                f"kbls: {root.folder}: {report.changed} files written, {report.deleted} deleted, "
                f"{report.embedded} chunks embedded, {report.reused} reused in {report.seconds:.2f}s",
            )
        for skipped in report.skipped:
            self._listener.log(logging.WARNING, f"kbls: {skipped.path}: {skipped.reason}")
        self._reporter.emit(force=True)


def _when_indexing_resumes(error: Exception | None) -> str:
    """What the user waits for after a job the store refused (read-only is a `StoreFullError` too)."""
    if isinstance(error, StoreReadOnlyError):
        return "once the store can be written again"
    if isinstance(error, StoreFullError):
        return "once space is freed"
    return "when the other process is done"
