"""The daemon's state as the user sees it: the state word, status notifications and progress.

`StatusReporter` decides when a `kb/indexStatus` goes out (on a change of state, at most
REPORTS_PER_SECOND for a changing count) and keeps the one `window/workDoneProgress` of a
burst of indexing open until the queue runs dry. It is called from the worker and the LSP's
threads; the snapshot of the daemon is taken under its lock, so two threads never send their
statuses out of order.

A root that could not be opened (`kbls.daemon.roots.RefusedRoot`) counts as an error of the
state and is listed by `kb/status` with its reason and an empty store (`refused_status`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from kbls.daemon.answers import IndexState, SafeListener
from kbls.daemon.roots import RefusedView
from kbls.limits import State
from kbls.results import RootStatus, SqliteInfo

#: at most this many progress reports and status notifications per second.
REPORTS_PER_SECOND = 8
PROGRESS_TITLE = "kbls: indexing"


def state_of(*, model_loaded: bool, model_error: str | None, root_errors: list[str], busy: bool) -> State:
    """`error` while the model cannot load or a root cannot be indexed; else loading, indexing, ready."""
    if model_error is not None or root_errors:
        return "error"
    if not model_loaded:
        return "loading"
    return "indexing" if busy else "ready"


def refusal(refused: RefusedView) -> str:
    """A refused root's part of the state's `error`: the folder, then why."""
    reason = refused.reason
    return reason if reason.startswith(str(refused.folder)) else f"{refused.folder}: {reason}"


def joined(error: str | None, refused: RefusedView | None) -> str | None:
    """An open root's error: why indexing fails, and why its config is not in effect."""
    parts = [part for part in (error, refused.reason if refused else None) if part]
    return "; ".join(parts) or None


def refused_status(folder: Path) -> RootStatus:
    """The store status of a root that is not open: nothing is read, nothing is created."""
    return RootStatus(
        root=str(folder), store="", store_bytes=0, files=0, chunks=0, vectors=0, model="", dimension=0,
        sqlite=SqliteInfo(module="", version="", vec=""), errors=[],
    )


class StatusReporter:
    """Throttled `kb/indexStatus` notifications and the indexing progress of one daemon."""

    def __init__(self, listener: SafeListener, snapshot: Callable[[str], IndexState]) -> None:
        self._listener = listener
        self._snapshot = snapshot
        # Guards _last, _last_sent, _progress, _progress_open and _last_progress. Listener calls
        # are made under it so notifications keep their order (the listener never blocks).
        self._lock = threading.Lock()
        self._last: IndexState | None = None
        self._last_sent = 0.0
        self._progress: object = None
        self._progress_open = False
        self._last_progress = 0.0

    def emit(self, message: str = "", *, force: bool = False) -> None:
        """Send the state if it changed (a changing count: at most REPORTS_PER_SECOND)."""
        with self._lock:
            status = self._snapshot(message)
            now = time.monotonic()
            last = self._last
            if not force and last is not None and last.state == status.state and last.error == status.error and (
                last.links_settled == status.links_settled
            ) and (
                last.pending == status.pending or now - self._last_sent < 1 / REPORTS_PER_SECOND
            ):
                return
            if status == last:
                return
            self._last, self._last_sent = status, now
            self._listener.index_status(status)

    def tell(self, listener: SafeListener) -> None:
        """Send the state now to `listener` alone (a client that just connected), in order with
        what `emit` sends everyone: a snapshot taken outside the lock could reach the client
        after a newer state and stay there (a `ready` overtaken by the `indexing` before it)."""
        with self._lock:
            listener.index_status(self._snapshot(""))

    def state_changed(self) -> bool:
        """The state differs from the last one sent (or none was sent)."""
        with self._lock:
            return self._last is None or self._last.state != self._snapshot("").state

    def begin_progress(self, message: str) -> None:
        with self._lock:
            if not self._progress_open:
                self._progress_open = True
                self._progress = self._listener.progress_begin(PROGRESS_TITLE, message)

    def report_progress(self, done: int, total: int, message: str = "") -> bool:
        """Report `done` of `total` files; False when throttled (nothing was sent)."""
        with self._lock:
            now = time.monotonic()
            if now - self._last_progress < 1 / REPORTS_PER_SECOND and done < total:
                return False
            self._last_progress = now
            if self._progress_open:
                percentage = int(100 * done / max(total, 1))
                self._listener.progress_report(self._progress, percentage, message or f"{done}/{total} files")
            return True

    def progress_note(self, message: str) -> None:
        """A word in the open progress (e.g. waiting for another process), percentage 0."""
        with self._lock:
            if self._progress_open:
                self._listener.progress_report(self._progress, 0, message)

    def end_progress(self, message: str = "done") -> None:
        with self._lock:
            if self._progress_open:
                self._progress_open = False
                self._listener.progress_end(self._progress, message)
