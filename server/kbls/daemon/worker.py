"""The daemon's one index thread: it opens and closes roots, loads the model and runs the jobs.

Only this thread writes the stores. Queries never wait for it: they run on the LSP's threads
against the engines' thread-local read connections (SQLite WAL).

A job that fails is not dropped: it goes back in the queue with a pause (`kbls.daemon.jobs`),
its root shows the reason (state `error`) until a retry succeeds, and the user is told once.
Before each job, and after a failure, the worker checks that the store file is still the one it
opened: a store deleted or replaced under the daemon (a cleared cache, `kbls index --rebuild`) is
opened again, rebuilt when missing, and the user is told.

What the user is told about each outcome is `kbls.daemon.notices`.

Lexical first: scans write notes without vectors (`IndexPipeline.run(embed=False)`); the worker
then queues an embedding job that embeds for EMBED_STEP_S at a time and is queued again until
nothing is pending, behind every save and scan (a save stops it after the model batch under way). The notes open in an
editor (`note_opened`) are embedded first.

`Worker` is one large class on purpose: it is the single owner of the one thread that
writes, and its lock map (docs/architecture.md) is easier to check when every field that lock
guards lives in one class; the jobs, the notices and the opening of roots are already elsewhere.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass

from kbls.daemon.answers import SafeListener
from kbls.daemon.jobs import Job, JobQueue, OpenRequest, Outcome, RootChanges, Run, Stop, Wait
from kbls.daemon.notices import JobNotices
from kbls.daemon.opener import RootOpener
from kbls.daemon.priority import lower_priority
from kbls.daemon.roots import Root, RootRegistry
from kbls.daemon.status import StatusReporter
from kbls.errors import KblsError, ModelError, StoreBusyError, StoreFullError
from kbls.indexing.progress import IndexProgress, Rate
from kbls.results import IndexReport

log = logging.getLogger(__name__)

#: seconds an embedding job runs before it yields to the queue (and is queued again)
EMBED_STEP_S = 2.0
#: added to the index thread's nice value: the editor and the daemon's queries come first
INDEX_NICENESS = 10

STORE_REPLACED = (
    "the store {path} was deleted or replaced while kbls was running (a cleared cache, `kbls index --rebuild`); "
    "kbls opens it again and indexes what is missing"
)


@dataclass(frozen=True)
class QueueView:
    """The worker's shared state at one moment."""

    idle: bool
    pending: int
    model_loaded: bool
    model_error: str | None
    #: chunks whose text waits for its vector, every open root together
    waiting: int = 0
    #: chunks embedded per second lately (0: none lately)
    rate: float = 0.0
    #: no scan or save queued or running (only embedding, or nothing): the links are complete
    links_settled: bool = False


class Worker:
    """The index thread and the state it shares with the LSP, watcher and timer threads."""

    def __init__(
        self, registry: RootRegistry, opener: RootOpener, reporter: StatusReporter, listener: SafeListener
    ) -> None:
        self._registry = registry
        self._opener = opener
        self._reporter = reporter
        self._listener = listener
        # Guards _queue (jobs, root changes, the running job), _applying, _model_loaded,
        # _model_error and _cancel. Taken by the LSP, watcher and timer threads to queue work and read the state,
        # and by the worker thread to take work. Never held while calling the listener or the
        # reporter (lock order: reporter -> this -> registry).
        self._cond = threading.Condition()
        self._queue = JobQueue()
        #: root changes taken from the queue are being applied: a root is opening, its first scan
        #: not queued yet (the queue alone looks idle then, and the state said a false `ready`).
        self._applying = False
        self._model_loaded = False
        self._model_error: str | None = None
        #: set to stop the running job (preempted by a save, its root closed, shutdown).
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._notices = JobNotices(registry, reporter, listener)
        #: per root: the root-relative paths open in an editor (a count per path: several windows)
        self._open_notes: dict[str, Counter[str]] = {}
        #: per root: chunks waiting for their vectors after its last job
        self._waiting: dict[str, int] = {}
        #: chunks embedded per second lately, every root together (for the ETA)
        self._rate = Rate()

    # -- any thread ----------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="kbls-index", daemon=True)
        self._thread.start()

    def stop(self, timeout: float) -> None:
        with self._cond:
            if self._queue.stop():
                self._cancel.set()
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def submit(self, key: str, job: Job) -> None:
        """Queue `job` for the root `key` (dropped if that root is not open or opening)."""
        with self._cond:
            if self._queue.add(key, job):
                self._cancel.set()
            self._cond.notify_all()
        self._reporter.emit()

    def open_root(self, request: OpenRequest) -> None:
        with self._cond:
            self._queue.request_open(request)
            self._cond.notify_all()

    def close_root(self, key: str) -> None:
        with self._cond:
            if self._queue.request_close(key):
                self._cancel.set()
            self._cond.notify_all()

    def reopen_root(self, request: OpenRequest) -> None:
        """Close the root and open it again, the new engine swapped in once it is open."""
        with self._cond:
            if self._queue.request_close(request.key):
                self._cancel.set()
            self._queue.request_open(request)
            self._cond.notify_all()

    def note_opened(self, key: str, rel: str, opened: bool) -> None:
        """An editor opened (or closed) the note `rel` of the root `key`: open notes embed first."""
        with self._cond:
            counts = self._open_notes.setdefault(key, Counter())
            counts[rel] += 1 if opened else -1
            if counts[rel] <= 0:
                del counts[rel]

    def _open_first(self, key: str) -> list[str]:
        with self._cond:
            return list(self._open_notes.get(key, ()))

    def is_known(self, key: str) -> bool:
        with self._cond:
            return self._queue.is_known(key)

    def view(self) -> QueueView:
        with self._cond:
            return QueueView(
                idle=self._queue.idle and not self._applying, pending=self._queue.pending(self._registry.known_files),
                model_loaded=self._model_loaded, model_error=self._model_error,
                waiting=sum(n for k, n in self._waiting.items() if self._queue.is_known(k)),
                rate=self._rate.per_second(time.monotonic()),
                links_settled=self._queue.lexical_idle and not self._applying,
            )

    def wait_idle(self, timeout: float) -> bool:
        """Block until the model is loaded and nothing is queued or running (tests, benchmarks)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not (self._queue.idle and not self._applying and self._model_loaded):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
            return True

    # -- the thread ----------------------------------------------------------------------------
    def _run(self) -> None:
        lower_priority(INDEX_NICENESS)  # before the model loads: its threads inherit it
        self._reporter.begin_progress("loading the model")
        self._reporter.emit(force=True)
        with self._cond:
            first = self._queue.next(time.monotonic())
            self._applying = isinstance(first, RootChanges)
        if isinstance(first, Stop):
            return
        if isinstance(first, RootChanges):
            self._apply(first)
        self._load_models()
        self._reporter.emit(force=True)
        while True:
            try:
                step = self._next()
                if isinstance(step, Stop):
                    return
                if isinstance(step, RootChanges):
                    self._apply(step)
                    self._load_models()
                else:
                    self._index(step)
            except Exception:  # a bug in one job must not end indexing for the session
                log.exception("the index worker hit an unexpected error")
                with self._cond:
                    self._queue.finish(Outcome.FAILED, time.monotonic())
                time.sleep(0.1)

    def _next(self) -> RootChanges | Run | Stop:
        told = False
        while True:
            with self._cond:
                now = time.monotonic()
                step = self._queue.next(now)
                if not isinstance(step, Wait):
                    self._applying = isinstance(step, RootChanges)
                    if isinstance(step, Run) and self._queue.running is not None:
                        self._cancel = threading.Event()
                        self._queue.running.remaining = step.job.size(self._registry.known_files(step.key))
                    return step
                if told:
                    self._cond.wait(None if step.until is None else max(step.until - now, 0.01))
                    continue
                self._cond.notify_all()  # wake wait_idle
            # Nothing to run now: close the progress (if nothing waits for a retry) and say so.
            if step.until is None:
                self._reporter.end_progress()
            self._reporter.emit()
            told = True

    def _apply(self, changes: RootChanges) -> None:
        """Close, open and reopen roots; a reopened root's new engine replaces the old one."""
        if changes.opens:
            self._reporter.begin_progress("scanning")  # opening a store can take a while
        try:
            for key in changes.closes:
                self._registry.cancel_reopen(key)
                root = self._registry.pop(key)
                with self._cond:
                    self._queue.closed(key)
                if root is not None:
                    self._opener.close(root)
                    self._listener.log(logging.INFO, f"kbls: closed {root.folder}")
            for request in changes.opens:
                old = self._registry.get(request.key)
                if old is not None and not request.reopen:
                    continue
                if self._open(request) is None and old is not None and old.replaced:
                    # Its store is gone and could not be made again: a job retries it (with backoff).
                    with self._cond:
                        self._queue.add(request.key, Job(full=True))
                        self._cond.notify_all()
        finally:
            with self._cond:
                self._applying = False  # the opened roots' scans are queued by now
                self._cond.notify_all()
        self._reporter.emit(force=True)

    def _open(self, request: OpenRequest, *, quiet: bool = False) -> Root | None:
        """Open a root and serve it in place of the old one (closed); None if it cannot be opened."""
        root = self._opener.open(request, quiet=quiet)
        if root is None:
            return None  # told; a reopened root keeps its old engine
        old = self._registry.put(root)
        with self._cond:
            self._queue.opened(request.key, Job(full=True, progress=True))
            self._cond.notify_all()
        if old is not None:
            self._opener.close(old)
        return root

    def _load_models(self) -> None:
        for embedder in list(self._opener.embedders.values()):
            if embedder.loaded:
                continue
            started = time.perf_counter()
            try:
                embedder.load()
            except ModelError as exc:
                with self._cond:
                    self._model_error = str(exc)
                log.error("cannot load the model: %s", exc)
                self._listener.show(logging.ERROR, f"kbls: {exc}; searches are lexical only")
                continue
            log.info("model %s loaded in %.2fs", embedder.model_id, time.perf_counter() - started)
        with self._cond:
            self._model_loaded = True
            self._cond.notify_all()

    def _reopen_replaced(self, root: Root) -> bool:
        """Open a root whose store vanished or was replaced again; False if that failed.

        The user is told once per lost store; a store that cannot be created again (its folder
        unwritable) fails the job, which is retried with backoff like any other failure.
        """
        if self._registry.claim_replaced(root):
            message = STORE_REPLACED.format(path=root.store_path)
            log.warning("%s: %s", root.folder, message)
            self._listener.show(logging.WARNING, f"kbls: {root.folder}: {message}")
        return self._open(OpenRequest(root.uri, root.folder, reopen=True), quiet=True) is not None

    def _index(self, run: Run) -> None:
        root = self._registry.get(run.key)
        if root is not None and root.store_replaced() and not self._reopen_replaced(root):
            # Lost, and it cannot be made again now (e.g. its folder is unwritable): retried.
            self._finish(root, run.job, Outcome.FAILED, None, self._opener.last_error or "the store is gone")
            return
        if root is None or self._registry.get(run.key) is not root:
            with self._cond:  # closed, or reopened: a reopened root is scanned in full, covering this job
                self._queue.finish(Outcome.DONE, time.monotonic())
                self._cond.notify_all()
            return
        with self._cond:
            cancel = self._cancel
        job = run.job
        if job.progress:
            self._reporter.begin_progress("scanning")

        embedded = 0

        def progress(p: IndexProgress) -> None:
            nonlocal embedded
            with self._cond:
                if self._queue.running is not None:
                    self._queue.running.remaining = p.files_total - p.files_done
                if p.embedding:
                    self._waiting[run.key] = p.chunks_left
                if p.chunks_embedded > embedded:
                    self._rate.add(p.chunks_embedded - embedded, time.monotonic())
                    embedded = p.chunks_embedded
            if p.embedding:
                total = max(root.chunks, p.chunks_left, 1)
                if self._reporter.report_progress(total - p.chunks_left, total, f"embedding: {p.chunks_left} chunks left"):
                    self._reporter.emit("embedding")
            elif self._reporter.report_progress(p.files_done, p.files_total):
                self._reporter.emit(p.path)

        paths = None if job.full else sorted(root.real / rel for rel in job.files)
        report: IndexReport | None = None
        error: Exception | None = None
        try:
            with root.lease() as engine:
                if job.embed_only:
                    report = engine.embed_pending(
                        first=lambda: self._open_first(run.key), progress=progress, cancel=cancel, wait=False,
                        budget_s=EMBED_STEP_S,
                    )
                else:
                    report = engine.index(
                        paths, force=job.force, progress=progress, cancel=cancel, wait=False, embed=False
                    )
            outcome = Outcome.BUSY if report.busy else Outcome.DONE
        except (StoreFullError, StoreBusyError) as exc:
            outcome, error = Outcome.FULL, exc
        except Exception as exc:  # an unwritable or vanished store, a bug: retried, never dropped
            outcome, error = Outcome.FAILED, exc
            if not isinstance(exc, (KblsError, OSError)):
                log.exception("indexing %s failed", root.folder)
        if error is not None and root.store_replaced() and self._reopen_replaced(root):
            outcome = Outcome.DONE  # the store vanished mid-job: the reopened root rescans
            with self._cond:
                self._queue.finish(outcome, time.monotonic())
                self._cond.notify_all()
            return
        reason = (str(error) or type(error).__name__) if error is not None else ""
        self._finish(root, job, outcome, report, reason, error)

    def _finish(
        self, root: Root, job: Job, outcome: Outcome, report: IndexReport | None, reason: str,
        error: Exception | None = None,
    ) -> None:
        """Record how the running job ended (requeued unless done) and tell the user."""
        with self._cond:
            delay = self._queue.finish(outcome, time.monotonic())
            if report is not None and outcome is Outcome.DONE:
                self._waiting[root.key] = report.pending
                if report.pending:  # behind any save or scan queued meanwhile
                    self._queue.add(root.key, Job(embed=True))
            self._cond.notify_all()
        if report is not None and outcome is Outcome.DONE:
            self._notices.done(root, job, report)
        elif outcome is Outcome.BUSY:
            self._notices.busy(root)
        else:
            self._notices.failed(root, outcome, reason, error, delay)
