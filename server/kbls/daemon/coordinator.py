"""The daemon's coordinator: workspace roots -> engines, one index queue, one worker thread.

It knows nothing of LSP (`kbls.lsp.server` adapts it), so the benchmarks and tests can drive it
directly. The rules it keeps:

- Queries never wait behind indexing. They run on the caller's thread against the engines'
  thread-local read connections (SQLite WAL); only the worker thread writes.
- One worker, one queue. Work is kept per root as "rescan everything" and/or a set of files,
  so a burst of saves or watcher events collapses into one run. A save preempts a running full
  scan (which is incremental, so it resumes cheaply afterwards).
- Several daemons may share a store: `Engine.index(wait=False)` returns `busy` while another
  process holds the writer lock; the job goes back in the queue and is retried, and searches
  keep answering meanwhile. The retry finds the other process's work already stored, so
  nothing is embedded twice.
- State: `loading` until the model is loaded (searches fall back to lexical), `indexing` while
  work is queued or running, `ready` when idle, `error` when the model cannot be loaded.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgspec
from pygls.uris import from_fs_path

from kbls import __version__
from kbls.config import CONFIG_FILE, Config, ModelConfig, load_config
from kbls.daemon.watch import RootWatcher
from kbls.engine import Engine
from kbls.errors import ConfigError, KblsError, ModelError, OutsideRootError, StoreBusyError, StoreFullError
from kbls.indexing.embed import Embedder
from kbls.lsp import wire as protocol
from kbls.storage.store import Filters

log = logging.getLogger(__name__)

#: seconds before a job refused with `busy` (another process writing) is tried again.
BUSY_RETRY = 0.5
#: seconds before indexing is tried again after the store's disk was full.
FULL_RETRY = 5.0
#: texts per embedding call in the daemon, unless configured (see `_daemon_defaults`).
DAEMON_BATCH_SIZE = 4
#: at most this many progress reports and status notifications per second.
REPORTS_PER_SECOND = 8


class Listener(Protocol):
    """What the daemon tells its front end (the LSP server); called from the worker thread."""

    def index_status(self, status: protocol.IndexStatus) -> None: ...
    def progress_begin(self, title: str, message: str) -> Any: ...
    def progress_report(self, handle: Any, percentage: int, message: str) -> None: ...
    def progress_end(self, handle: Any, message: str) -> None: ...
    def log_message(self, level: int, message: str) -> None: ...
    def show_message(self, level: int, message: str) -> None: ...


class NullListener:
    """A listener that drops everything (benchmarks, unit tests)."""

    def index_status(self, status: protocol.IndexStatus) -> None:
        pass

    def progress_begin(self, title: str, message: str) -> Any:
        return None

    def progress_report(self, handle: Any, percentage: int, message: str) -> None:
        pass

    def progress_end(self, handle: Any, message: str) -> None:
        pass

    def log_message(self, level: int, message: str) -> None:
        log.log(level, "%s", message)

    def show_message(self, level: int, message: str) -> None:
        log.log(level, "%s", message)


@dataclass
class Root:
    uri: str
    #: the folder as the client names it (not symlink-resolved), so hit URIs match its buffers.
    folder: Path
    engine: Engine
    watcher: RootWatcher | None = None
    files: int = 0
    chunks: int = 0
    busy_until: float = 0.0
    busy_logged: bool = False
    #: the store's disk was full on the last run (the user has been told).
    disk_full: bool = False


@dataclass
class _Job:
    full: bool = False
    force: bool = False
    files: set[str] = field(default_factory=set)
    progress: bool = False

    def merge(self, other: _Job) -> None:
        self.full |= other.full
        self.force |= other.force
        self.files |= other.files
        self.progress |= other.progress


def _daemon_defaults(config: Config) -> Config:
    """The daemon embeds DAEMON_BATCH_SIZE texts per model call unless the user chose a size.

    onnxruntime's peak memory grows with the batch: `kbls serve` indexing Rust by Example peaked
    at 1.8 GB RSS with 32 texts per call, 0.65 GB with 8 and 0.46 GB with 4, for about 30 % less
    throughput than 32 (4 and 8 alike). A daemon living next to an editor should stay small;
    `kbls index` keeps the faster default.
    """
    if config.model.batch_size != ModelConfig().batch_size:
        return config  # set in .kbls.yaml or initializationOptions: respected
    model = msgspec.structs.replace(config.model, batch_size=DAEMON_BATCH_SIZE)
    return msgspec.structs.replace(config, model=model)


def _config_stamp(folder: Path) -> tuple[int, int] | None:
    """(mtime, size) of the root's config file, to notice a change the watcher could miss."""
    try:
        st = (folder / CONFIG_FILE).stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _folder(path: Path | str) -> Path:
    return Path(os.path.abspath(os.path.expanduser(str(path))))


class Daemon:
    """Roots, engines and the index worker of one `kbls serve` process.

    :param listener: receives state changes, progress and messages.
    :param overrides: config keys from `initializationOptions`, applied to every root.
    :param watch: start a watchdog observer per root.
    :param debounce: seconds of quiet before a batch of watcher events is indexed.
    """

    def __init__(
        self,
        listener: Listener | None = None,
        overrides: dict[str, Any] | None = None,
        *,
        watch: bool = True,
        debounce: float = 0.2,
    ) -> None:
        self.listener: Listener = listener or NullListener()
        self.overrides = overrides or None
        self.watch = watch
        self.debounce = debounce
        self._roots: dict[str, Root] = {}
        #: roots whose store could not be written at open (full disk, stalled writer): retried.
        self._reopening: set[str] = set()
        self._embedders: dict[str, Embedder] = {}
        self._cond = threading.Condition()
        self._to_open: list[tuple[str, Path]] = []
        self._to_close: list[str] = []
        self._jobs: dict[str, _Job] = {}
        self._running: tuple[str, _Job, threading.Event] | None = None
        self._preempted = False
        self._remaining = 0  # files left in the running job
        self._models_loaded = False
        self._model_error: str | None = None
        self._stopped = False
        self._thread: threading.Thread | None = None
        self._progress: Any = None
        self._progress_open = False
        self._last_status: protocol.IndexStatus | None = None
        self._last_report = 0.0

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self, folders: list[tuple[str, Path]]) -> None:
        """Queue the roots and start the worker (returns at once)."""
        for uri, path in folders:
            self.add_root(uri, path)
        self._thread = threading.Thread(target=self._work, name="kbls-index", daemon=True)
        self._thread.start()

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._cond:
            if self._stopped:
                return
            self._stopped = True
            if self._running is not None:
                self._running[2].set()
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        for root in list(self._roots.values()):
            self._close(root)
        self._roots.clear()

    def add_root(self, uri: str, path: Path | str) -> None:
        with self._cond:
            self._to_open.append((uri, _folder(path)))
            self._cond.notify_all()

    def reopen_root(self, uri: str, path: Path | str) -> None:
        """Close and open a root again (its `.kbls.yaml` changed); the scan is incremental."""
        self._safe(self.listener.log_message, logging.INFO, f"kbls: {path}: configuration changed, reloading it")
        self.remove_root(path)
        self.add_root(uri, path)

    def remove_root(self, path: Path | str) -> None:
        key = str(_folder(path))
        self._reopening.discard(key)
        with self._cond:
            self._to_close.append(key)
            self._jobs.pop(key, None)
            if self._running is not None and self._running[0] == key:
                self._running[2].set()
            self._cond.notify_all()

    def _reopen(self, uri: str, folder: Path) -> None:
        """Try again to open a root whose store could not be written (unless it was removed)."""
        if str(folder) in self._reopening and not self._stopped:
            self.add_root(uri, folder)

    # -- state ---------------------------------------------------------------------------------
    @property
    def state(self) -> str:
        if self._model_error is not None:
            return "error"
        if not self._models_loaded:
            return "loading"
        if self._running is not None or self._jobs or self._to_open:
            return "indexing"
        return "ready"

    @property
    def pending(self) -> int:
        with self._cond:
            queued = 0
            for key, job in self._jobs.items():
                root = self._roots.get(key)
                queued += (root.files if root else 0) if job.full else len(job.files)
            return queued + (self._remaining if self._running is not None else 0)

    def index_info(self) -> protocol.IndexInfo:
        return protocol.IndexInfo(state=self.state, pending=self.pending)

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing is queued or running (tests, benchmarks)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._jobs or self._running is not None or self._to_open or not self._models_loaded:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
            return True

    def _emit_status(self, message: str = "", force: bool = False) -> None:
        state, pending = self.state, self.pending
        now = time.monotonic()
        if not force and self._last_status is not None:
            if self._last_status.state == state and (
                self._last_status.pending == pending or now - self._last_report < 1 / REPORTS_PER_SECOND
            ):
                return
        roots = list(self._roots.values())
        status = protocol.IndexStatus(
            state=state, pending=pending, files=sum(r.files for r in roots),
            chunks=sum(r.chunks for r in roots), message=message,
        )
        if status == self._last_status:
            return
        self._last_status = status
        self._last_report = now
        self._safe(self.listener.index_status, status)

    def _safe(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception:  # the front end failing must not stop indexing
            log.exception("listener call %s failed", getattr(fn, "__name__", fn))
            return None

    # -- queue ---------------------------------------------------------------------------------
    def _enqueue(self, key: str, job: _Job) -> None:
        with self._cond:
            if key not in self._roots and key not in {str(p) for _, p in self._to_open}:
                return
            if key in self._jobs:
                self._jobs[key].merge(job)
            else:
                self._jobs[key] = job
            running = self._running
            if running is not None and running[1].full and job.files and not job.full:
                # A save should not wait behind a long scan: stop the scan, it resumes after.
                self._preempted = True
                running[2].set()
            self._cond.notify_all()
        self._emit_status()

    def file_saved(self, path: Path | str) -> bool:
        """Re-index one saved file next (ahead of any full scan). False if it is not indexed."""
        try:
            root, rel = self.locate(path)
        except OutsideRootError:
            return False
        if not root.engine.scanner.wanted(rel):
            return False
        self._enqueue(str(root.folder), _Job(files={rel}))
        return True

    def reindex(self, paths: list[Path] | None, force: bool = False) -> int:
        """Queue `paths` (None: every root); returns the number of files queued.

        :raises OutsideRootError: for a path outside every root (nothing is queued then).
        """
        if paths is None:
            queued = 0
            for root in list(self._roots.values()):
                self._enqueue(str(root.folder), _Job(full=True, force=force, progress=True))
                queued += root.files
            return queued
        located = [self.locate(p) for p in paths]
        for root, rel in located:
            self._enqueue(str(root.folder), _Job(files={rel}, force=force, progress=True))
        return len(located)

    def _take(self) -> tuple[Root, _Job] | str | None:
        """The next job; "roots" when roots must be opened or closed first; None when stopped."""
        with self._cond:
            while True:
                if self._stopped:
                    return None
                if self._to_open or self._to_close:
                    return "roots"
                now = time.monotonic()
                ready = [k for k in self._jobs if k in self._roots and self._roots[k].busy_until <= now]
                for key in [k for k in self._jobs if k not in self._roots]:
                    del self._jobs[key]
                if ready:
                    # Files (saves, watcher batches) before full scans.
                    ready.sort(key=lambda k: self._jobs[k].full)
                    key = ready[0]
                    job = self._jobs.pop(key)
                    self._running = (key, job, threading.Event())
                    self._remaining = self._roots[key].files if job.full else len(job.files)
                    return self._roots[key], job
                if not self._jobs:
                    self._cond.notify_all()  # wake wait_idle
                    self._idle()
                    self._cond.wait()
                else:
                    wake = min(self._roots[k].busy_until for k in self._jobs)
                    self._cond.wait(max(wake - now, 0.01))

    def _idle(self) -> None:
        """Called with the lock held when the queue runs dry."""
        if self._progress_open:
            self._progress_open = False
            self._safe(self.listener.progress_end, self._progress, "done")
        self._emit_status(force=self._last_status is None or self._last_status.state != self.state)

    # -- the worker ----------------------------------------------------------------------------
    def _work(self) -> None:
        self._begin_progress("loading the model")
        self._emit_status(force=True)
        while True:
            try:
                if not self._models_loaded:
                    self._process_roots()
                    self._load_models()
                    self._emit_status(force=True)
                    continue
                taken = self._take()
                if taken is None:
                    return
                if taken == "roots":
                    self._process_roots()
                    self._load_models()
                    continue
                root, job = taken
                self._index(root, job)
            except Exception:  # a bug in one job must not end indexing for the session
                log.exception("the index worker hit an unexpected error")
                with self._cond:
                    self._running = None
                time.sleep(0.1)

    def _begin_progress(self, message: str) -> None:
        if not self._progress_open:
            self._progress_open = True
            self._progress = self._safe(self.listener.progress_begin, "kbls: indexing", message)

    def _load_models(self) -> None:
        for embedder in list(self._embedders.values()):
            if embedder.loaded:
                continue
            started = time.perf_counter()
            try:
                embedder.load()
            except ModelError as exc:
                self._model_error = str(exc)
                log.error("cannot load the model: %s", exc)
                self._safe(self.listener.show_message, logging.ERROR, f"kbls: {exc}; searches are lexical only")
                continue
            log.info("model %s loaded in %.2fs", embedder.model_id, time.perf_counter() - started)
        with self._cond:
            self._models_loaded = True
            self._cond.notify_all()

    def _process_roots(self) -> None:
        with self._cond:
            to_open, self._to_open = self._to_open, []
            to_close, self._to_close = self._to_close, []
        # A root both closed and opened is a reopen (its config changed): the new engine is
        # opened first and swapped in, so searches never see the root missing.
        opening = {str(folder) for _, folder in to_open}
        for key in to_close:
            if key in opening:
                continue
            root = self._roots.pop(key, None)
            if root is not None:
                self._close(root)
                self._safe(self.listener.log_message, logging.INFO, f"kbls: closed {root.folder}")
        reopen = set(to_close) & opening
        done: set[str] = set()
        for uri, folder in to_open:
            key = str(folder)
            if key in done or (key in self._roots and key not in reopen):
                continue
            done.add(key)
            root = self._open(uri, folder)
            if root is None:
                continue
            with self._cond:
                old = self._roots.get(key)
                self._roots[key] = root
                job = self._jobs.setdefault(key, _Job())
                job.merge(_Job(full=True, progress=True))
                self._cond.notify_all()
            if old is not None:
                self._close(old)
        if to_open:
            self._begin_progress("scanning")
        self._emit_status(force=True)

    def _open(self, uri: str, folder: Path) -> Root | None:
        stamp = _config_stamp(folder)
        config = self._config(folder)
        try:
            embedder = self._embedders.get(config.model.name)
            if embedder is None:
                embedder = self._embedders[config.model.name] = Embedder(config.model)
            # A damaged store or one of another model cannot be served: the engine sets it
            # aside and starts afresh, and the user is told why everything is indexed again.
            engine = Engine(
                folder, config=config, embedder=embedder, load_model_on_demand=False,
                on_model_mismatch="rebuild", check_store=True,
            )
        except KblsError as exc:
            log.error("cannot open %s: %s", folder, exc)
            if str(folder) not in self._reopening:
                self._safe(self.listener.show_message, logging.ERROR, f"kbls: {folder}: {exc}")
            if isinstance(exc, (StoreFullError, StoreBusyError)):
                # Nothing is wrong with the store: open it again once it can be written.
                self._reopening.add(str(folder))
                timer = threading.Timer(FULL_RETRY, self._reopen, (uri, folder))
                timer.daemon = True
                timer.start()
            return None
        self._reopening.discard(str(folder))
        if engine.notice:
            self._safe(self.listener.show_message, logging.WARNING, f"kbls: {folder}: {engine.notice}")
        counts = engine.store.counts()
        # Load the vectors now, on the worker: otherwise the user's first search pays for it
        # (about a second at 50k chunks).
        try:
            engine.vectors.sync()
        except Exception:  # the first search will try again; opening the root must not fail
            log.exception("cannot load the vectors of %s", folder)
        root = Root(uri=uri, folder=folder, engine=engine, files=counts["files"], chunks=counts["chunks"])
        if self.watch:
            try:
                root.watcher = RootWatcher(
                    engine.root, engine.scanner.wanted,
                    lambda paths, rescan, key=str(folder): self._enqueue(key, _Job(full=rescan, files=paths)),
                    ignored_dirs=(engine.store_dir,), delay=self.debounce,
                    on_config=lambda uri=uri, folder=folder: self.reopen_root(uri, folder),
                )
                root.watcher.start()
            except Exception as exc:  # e.g. inotify watch limit reached: still index on save
                log.warning("cannot watch %s: %s", folder, exc)
                self._safe(self.listener.show_message, logging.WARNING,
                           f"kbls: cannot watch {folder} for outside changes ({exc}); saves are still indexed")
                root.watcher = None
        if root.watcher is not None and _config_stamp(folder) != stamp:
            self.reopen_root(uri, folder)  # changed before the watcher could see it
        self._safe(self.listener.log_message, logging.INFO,
                   f"kbls: {folder}: {root.files} files, {root.chunks} chunks in {engine.store_dir}")
        return root

    def _config(self, folder: Path) -> Config:
        """The root's config with the editor's overrides; on a bad value, say so and fall back."""
        return _daemon_defaults(self._load_config(folder))

    def _load_config(self, folder: Path) -> Config:
        try:
            return load_config(folder, self.overrides)[0]
        except ConfigError as exc:
            self._safe(self.listener.show_message, logging.WARNING, f"kbls: {exc}; ignoring it")
        if self.overrides:
            try:
                return load_config(folder)[0]
            except ConfigError as exc:
                self._safe(self.listener.show_message, logging.WARNING, f"kbls: {exc}; using the defaults")
        return Config()

    def _close(self, root: Root) -> None:
        if root.watcher is not None:
            root.watcher.stop()
            root.watcher = None
        try:
            root.engine.close()
        except Exception:
            log.exception("cannot close the store of %s", root.folder)

    def _index(self, root: Root, job: _Job) -> None:
        key = str(root.folder)
        cancel = self._running[2] if self._running else threading.Event()
        if job.progress:
            self._begin_progress("scanning")
        last = [0.0]

        def progress(done: int, total: int, path: str) -> None:
            self._remaining = total - done
            now = time.monotonic()
            if now - last[0] < 1 / REPORTS_PER_SECOND and done < total:
                return
            last[0] = now
            if self._progress_open:
                pct = int(100 * done / max(total, 1))
                self._safe(self.listener.progress_report, self._progress, pct, f"{done}/{total} files")
            self._emit_status(path)

        paths = None if job.full else sorted(root.engine.root / rel for rel in job.files)
        report = None
        full = False
        try:
            report = root.engine.index(paths, force=job.force, progress=progress, cancel=cancel, wait=False)
        except (StoreFullError, StoreBusyError) as exc:
            # What is committed stays searchable; the job waits and is retried until the disk
            # has space again or the stalled writer is gone.
            full = True
            if not root.disk_full:
                root.disk_full = True
                log.error("indexing %s stopped: %s", root.folder, exc)
                when = "once space is freed" if isinstance(exc, StoreFullError) else "when the other process is done"
                self._safe(self.listener.show_message, logging.ERROR,
                           f"kbls: {exc}. Searches answer from what is indexed; indexing resumes {when}.")
        except KblsError as exc:
            log.error("indexing %s failed: %s", root.folder, exc)
            self._safe(self.listener.show_message, logging.ERROR, f"kbls: indexing {root.folder} failed: {exc}")
        finally:
            with self._cond:
                self._running = None
                requeue = (report is not None and report.busy) or full
                if self._preempted and job.full and not self._stopped:
                    requeue = True
                self._preempted = False
                if requeue and key in self._roots and key not in self._to_close:
                    if report is not None and report.busy:
                        root.busy_until = time.monotonic() + BUSY_RETRY
                    elif full:
                        root.busy_until = time.monotonic() + FULL_RETRY
                    self._jobs.setdefault(key, _Job()).merge(job)
                self._cond.notify_all()
        if report is None:
            return
        if report.busy:
            if not root.busy_logged:
                root.busy_logged = True
                message = f"another kbls process is indexing {root.folder}; waiting for it"
                self._safe(self.listener.log_message, logging.INFO, f"kbls: {message}")
                if self._progress_open:
                    self._safe(self.listener.progress_report, self._progress, 0, message)
            self._emit_status()
            return
        root.busy_logged = False
        if root.disk_full:
            root.disk_full = False
            self._safe(self.listener.show_message, logging.INFO,
                       f"kbls: the store of {root.folder} can be written again; indexing resumed")
        root.files, root.chunks = report.files, report.chunks
        if report.changed or report.deleted or job.full:
            self._safe(
                self.listener.log_message, logging.INFO,
                f"kbls: {root.folder}: {report.changed} files written, {report.deleted} deleted, "
                f"{report.embedded} chunks embedded, {report.reused} reused in {report.seconds:.2f}s",
            )
        for skipped in report.skipped:
            self._safe(self.listener.log_message, logging.WARNING, f"kbls: {skipped.path}: {skipped.reason}")
        self._emit_status(force=True)

    # -- queries -------------------------------------------------------------------------------
    def roots(self) -> list[Root]:
        with self._cond:
            return list(self._roots.values())

    def locate(self, path: Path | str) -> tuple[Root, str]:
        """The root holding `path` (the innermost one) and the root-relative path; never reads it.

        :raises OutsideRootError: when no root holds it.
        """
        target = _folder(path)
        best: tuple[Root, str] | None = None
        for root in self.roots():
            for base in (root.folder, root.engine.root):
                try:
                    rel = target.relative_to(base)
                except ValueError:
                    continue
                if ".." in rel.parts:
                    continue
                if best is None or len(str(root.folder)) > len(str(best[0].folder)):
                    best = (root, rel.as_posix())
                break
        if best is None:
            raise OutsideRootError(f"{path} is outside every workspace folder")
        return best

    def uri_of(self, root: Root, rel: str) -> str:
        return from_fs_path(str(root.folder / rel)) or ""

    def _wire_hits(self, pairs: list[tuple[Root, Any]]) -> list[protocol.Hit]:
        return [protocol.hit_to_wire(hit, self.uri_of(root, hit.path), root.uri) for root, hit in pairs]

    def search(self, params: protocol.SearchParams) -> protocol.SearchResult:
        """Search every root and merge the hits by score.

        :raises QueryError: for a bad mode, limit or filter.
        """
        started = time.perf_counter()
        f = params.filters
        filters = Filters(tuple(f.paths), tuple(f.tags), tuple(f.types)) if f else None
        roots = self.roots()
        limit = params.limit or (roots[0].engine.config.search.limit if roots else 10)
        found: list[tuple[Root, Any]] = []
        for root in roots:
            result = root.engine.search(
                params.query, limit=limit, mode=params.mode, filters=filters, group_by_file=params.group_by_file
            )
            found.extend((root, hit) for hit in result.hits)
        if len(roots) > 1:
            found.sort(key=lambda pair: -pair[1].score)
        hits = self._wire_hits(found[:limit])
        return protocol.SearchResult(
            hits=hits, took_ms=round((time.perf_counter() - started) * 1000, 2), index=self.index_info()
        )

    def related(self, path: Path | str, line: int | None = None, limit: int = 10) -> list[protocol.Hit]:
        """Notes related to `path` (or its section at `line`), never the note itself.

        :raises OutsideRootError: for a path outside every root (it is not read).
        """
        root, rel = self.locate(path)
        hits = root.engine.related(root.engine.root / rel, line, limit=limit)
        # A candidate without a reason (no similarity, link or tag) is noise, not a relation.
        return self._wire_hits([(root, hit) for hit in hits if hit.reasons])

    def related_result(self, path: Path | str, line: int | None = None, limit: int = 10) -> protocol.SearchResult:
        """`related` in the shape of a search answer (`kb/related`)."""
        started = time.perf_counter()
        hits = self.related(path, line, limit)
        return protocol.SearchResult(
            hits=hits, took_ms=round((time.perf_counter() - started) * 1000, 2), index=self.index_info()
        )

    def status(self) -> protocol.StatusResult:
        roots = []
        for root in self.roots():
            s = root.engine.status()
            roots.append(
                protocol.RootStatus(
                    uri=root.uri, store=s.store, store_bytes=s.store_bytes, files=s.files, chunks=s.chunks,
                    model=s.model, dimension=s.dimension,
                    sqlite=protocol.SqliteInfo(module=s.sqlite.module, version=s.sqlite.version, vec=s.sqlite.vec),
                    errors=[protocol.FileProblem(path=e.path, reason=e.reason) for e in s.errors],
                )
            )
        all_roots = self.roots()
        embedder = next(iter(self._embedders.values()), None)
        return protocol.StatusResult(
            version=__version__, state=self.state, queue=self.pending,
            model=embedder.model_id if embedder else "", dimension=embedder.dimension if embedder else 0,
            embedded_since_start=sum(r.engine.embedded_total for r in all_roots),
            reused_since_start=sum(r.engine.reused_total for r in all_roots),
            roots=roots,
        )
