"""Opening a workspace root for the daemon: its config, its engine on the shared model, its watcher.

Runs on the worker thread only. A root that cannot be opened is listed as refused with the
reason (`kb/status`, state `error`) and shown once (again only when the reason changes). One
whose store cannot be written right now (full disk, stalled writer) is opened again by a timer;
one whose store is read-only is served read-only meanwhile (searched; its index jobs fail with
`StoreReadOnlyError`, so `kb/status` says indexing is paused) until the timer opens it for writing;
any other error (a refused `.kbls.yaml`, another root's store) waits for its config file to
change: a watcher of that one file opens it again, with no restart. A root whose `.kbls.yaml`
is invalid (bad YAML, a wrong value) is served with the defaults, as configs are forgiving, and
listed with the problem the same way until the file is fixed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from kbls.config import CONFIG_FILE, Config, ModelConfig, load_config
from kbls.daemon.answers import SafeListener
from kbls.daemon.jobs import FULL_RETRY, OpenRequest
from kbls.daemon.roots import RefusedRoot, Root, RootRegistry
from kbls.daemon.watch import ConfigWatcher, RootWatcher
from kbls.engine import Engine
from kbls.errors import ConfigError, KblsError, StoreBusyError, StoreFullError, StoreReadOnlyError
from kbls.indexing.embed import Embedder

log = logging.getLogger(__name__)

#: texts per embedding call in the daemon, unless configured (see `daemon_defaults`).
DAEMON_BATCH_SIZE = 4

#: what a root's error adds when its edited config is refused and it goes on as it was.
SERVED_AS_BEFORE = "served with its previous settings until this is fixed"
#: what a root's error adds when its config file is invalid (forgiving config: it is served).
DEFAULTS_MEANWHILE = "kbls uses the default settings for this root until it is fixed"

#: callback(root key, changed root-relative paths, rescan the whole root)
BatchFn = Callable[[str, set[str], bool], None]


def daemon_defaults(config: Config) -> Config:
    """The daemon embeds DAEMON_BATCH_SIZE texts per model call unless the user chose a size.

    onnxruntime's peak memory grows with the batch: `kbls serve` indexing Rust by Example peaked
    at 1.8 GB RSS with 32 texts per call, 0.65 GB with 8 and 0.46 GB with 4, for about 30 % less
    throughput than 32 (4 and 8 alike). A daemon living next to an editor should stay small;
    `kbls index` keeps the faster default. The model's threads (`model.threads` unset) leave a
    core to the editor (`daemon_threads`).
    """
    model = config.model
    if model.batch_size == ModelConfig().batch_size:  # else set in .kbls.yaml or initializationOptions
        model = msgspec.structs.replace(model, batch_size=DAEMON_BATCH_SIZE)
    if model.threads is None:  # a core left for the editor (and the daemon's own queries)
        model = msgspec.structs.replace(model, threads=daemon_threads())
    return config if model is config.model else msgspec.structs.replace(config, model=model)


def daemon_threads() -> int:
    """The model's threads in the daemon: one less than the CPUs this process may use, at least 1."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cpus = os.cpu_count() or 2
    return max(1, cpus - 1)


def config_stamp(folder: Path) -> tuple[int, int] | None:
    """(mtime, size) of the root's config file, to notice a change the watcher could miss."""
    try:
        st = (folder / CONFIG_FILE).stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


@dataclass(eq=False)
class RootOpener:
    """Builds `Root`s; owns the embedders, one per model, shared by every root using it."""

    listener: SafeListener
    registry: RootRegistry
    overrides: dict[str, Any] | None
    _: KW_ONLY
    watch: bool
    debounce: float
    on_batch: BatchFn
    on_config: Callable[[str, Path], None]
    retry_open: Callable[[str, Path], None]
    #: model name -> embedder; worker thread only.
    embedders: dict[str, Embedder] = field(default_factory=dict, init=False)
    #: why the last `open` failed ("" when it did not); worker thread only.
    last_error: str = field(default="", init=False)

    def open(self, request: OpenRequest, *, quiet: bool = False) -> Root | None:
        """The root of `request`, its store opened and its vectors loaded; None if it cannot be
        (shown to the user unless `quiet`; the reason stays in `last_error`)."""
        uri, folder = request.uri, request.folder
        self.last_error = ""
        stamp = config_stamp(folder)
        loaded, problem = self._load_config(folder)
        config = daemon_defaults(loaded)
        try:
            embedder = self.embedders.get(config.model.name)
            if embedder is None:
                embedder = self.embedders[config.model.name] = Embedder(config.model)
            engine = self._engine(request, config, embedder)
        except KblsError as exc:
            log.error("cannot open %s: %s", folder, exc)
            self.last_error = str(exc)
            if quiet:
                return None  # an open root whose store vanished: its job keeps the reason
            serving = self.registry.get(request.key)
            if serving is not None and serving.replaced:
                news = True  # its store vanished: the retried jobs of the root carry the reason
            else:
                reason = f"{exc}; {SERVED_AS_BEFORE}" if serving is not None else str(exc)
                news = self._refuse(request, reason, watch=serving is None)
            if news and not self.registry.is_reopening(request.key):
                self.listener.show(logging.ERROR, f"kbls: {folder}: {exc}")
            if isinstance(exc, (StoreFullError, StoreBusyError)):
                # Nothing is wrong with the store: open it again once it can be written.
                self._reopen_later(request)
            return None
        if engine is None:  # still read-only: its read-only root serves on, the timer tries again
            self._reopen_later(request)
            return None
        if engine.notice:
            self.listener.show(logging.WARNING, f"kbls: {folder}: {engine.notice}")
        if engine.team:
            self.listener.log(
                logging.INFO,
                f"kbls: {folder} is read from the team store {engine.store.location}, which its ingest worker "
                "writes: saves here are not indexed, no note is embedded",
            )
        counts = engine.store.counts()
        # Load the vectors now, on the worker: otherwise the user's first search pays for it
        # (about a second at 50k chunks).
        try:
            engine.vectors.sync()
        except Exception as exc:  # the first search will try again; opening the root must not fail
            if engine.store.replaced():  # a rebuild replaced the file meanwhile: the reopen that follows loads them
                log.warning("cannot load the vectors of %s: its store was replaced meanwhile (%s)", folder, exc)
            else:
                log.exception("cannot load the vectors of %s", folder)
        root = Root(
            uri=uri, folder=folder, engine=engine,
            files=counts.files, chunks=counts.chunks,
        )
        serving = self.registry.get(request.key)
        if engine.read_only and not engine.team:  # a team store is read-only for good: its worker writes it
            self._reopen_later(request)
        elif serving is not None and serving.read_only and not engine.team:
            self.listener.show(logging.INFO, f"kbls: the store of {folder} can be written again; indexing resumed")
        self._settle(request, problem)
        root.watcher = self._watch(root)
        if config_stamp(folder) != stamp:
            self.on_config(uri, folder)  # changed before the watcher could see it
        self.listener.log(
            logging.INFO, f"kbls: {folder}: {root.files} files, {root.chunks} chunks in {engine.store_dir}"
        )
        return root

    def _engine(self, request: OpenRequest, config: Config, embedder: Embedder) -> Engine | None:
        """The root's engine; read-only when its store cannot be written (searched, not indexed).
        None when it still cannot be written and its read-only engine serves already.

        :raises KblsError: it cannot be opened (a read-only store that cannot be read either
            raises the write refusal: the timer tries again).
        """
        try:
            # A damaged store or one of another model cannot be served: the engine sets it
            # aside and starts afresh, and the user is told why everything is indexed again.
            return Engine(
                request.folder, config=config, embedder=embedder, load_model_on_demand=False,
                on_model_mismatch="rebuild", check_store=True,
            )
        except StoreReadOnlyError as exc:
            serving = self.registry.get(request.key)
            if serving is not None and serving.read_only:
                return None
            log.warning("%s: %s; serving it read-only", request.folder, exc)
            try:
                return Engine(
                    request.folder, config=config, embedder=embedder, load_model_on_demand=False, read_only=True,
                )
            except KblsError as second:
                log.error("cannot open %s read-only either: %s", request.folder, second)
                raise exc from None

    def _reopen_later(self, request: OpenRequest) -> None:
        """Open the root again (for writing) after FULL_RETRY."""
        uri, folder = request.uri, request.folder
        self.registry.schedule_reopen(request.key, FULL_RETRY, lambda: self.retry_open(uri, folder))

    def _settle(self, request: OpenRequest, problem: str | None) -> None:
        """The root opened: no longer refused, unless its own config file is invalid (then it is
        listed with that problem, shown once, and served with the defaults until it is fixed;
        the root's own watcher sees the fix)."""
        previous = self.registry.refused(request.key)
        if self.registry.accept(request.key) and problem is None:
            self.listener.log(logging.INFO, f"kbls: {request.folder}: its configuration is in effect now")
        if problem is None:
            return
        reason = f"{problem}; {DEFAULTS_MEANWHILE}"
        self.registry.refuse(RefusedRoot(request.uri, request.folder, reason))
        if previous is None or previous.reason != reason:
            self.listener.show(logging.WARNING, f"kbls: {reason}")

    def _refuse(self, request: OpenRequest, reason: str, *, watch: bool) -> bool:
        """List the root as refused for `reason`; True when that is news (to be shown).

        With `watch` (a root that is not open) a watcher of its config file tries it again when
        the file changes; an open root's own watcher does that already.
        """
        uri, folder = request.uri, request.folder
        previous = self.registry.refused(request.key)
        watcher = None
        if self.watch and watch and (previous is None or previous.watcher is None):
            watcher = self._watch_config(uri, folder)
        self.registry.refuse(RefusedRoot(uri, folder, reason, watcher=watcher))
        return previous is None or previous.reason != reason

    def _watch_config(self, uri: str, folder: Path) -> ConfigWatcher | None:
        try:
            watcher = ConfigWatcher(folder, lambda: self.retry_open(uri, folder), delay=self.debounce)
            watcher.start()
        except Exception as exc:  # e.g. no such folder, inotify limit: the client can add it again
            log.warning("cannot watch %s for a fixed configuration: %s", folder / CONFIG_FILE, exc)
            return None
        return watcher

    def _watch(self, root: Root) -> RootWatcher:
        """The root's watcher: it takes the editor's file events, and observes the tree itself
        unless `watch` is off."""
        key, uri, folder = root.key, root.uri, root.folder
        watcher = RootWatcher(
            root.real, root.scanner.wanted,
            lambda paths, rescan: self.on_batch(key, paths, rescan),
            ignored_dirs=(root.store_dir,), delay=self.debounce,
            on_config=lambda: self.on_config(uri, folder),
        )
        if not self.watch:
            return watcher
        try:
            watcher.observe()
        except Exception as exc:  # e.g. inotify watch limit reached: still index on save
            log.warning("cannot watch %s: %s", folder, exc)
            self.listener.show(
                logging.WARNING,
                f"kbls: cannot watch {folder} for outside changes ({exc}); saves and the editor's file events "
                "are still indexed",
            )
        return watcher

    def _load_config(self, folder: Path) -> tuple[Config, str | None]:
        """The root's config with the editor's overrides, and the problem of the root's own
        config file (None: it has none). Bad overrides are shown and left out; a bad file
        leaves the defaults (the caller lists the root with the problem)."""
        try:
            return load_config(folder, self.overrides)[0], None
        except ConfigError as exc:
            if not self.overrides:
                return Config(), str(exc)
            first = exc
        try:
            config = load_config(folder)[0]
        except ConfigError as exc:
            return Config(), str(exc)
        self.listener.show(logging.WARNING, f"kbls: {first}; ignoring it")  # the overrides are wrong
        return config, None

    def close(self, root: Root) -> None:
        """Stop the root's watcher now (it stays in place: a stopped watcher drops what it is
        told) and retire its engine: the last lease in flight closes it."""
        if root.watcher is not None:
            root.watcher.stop()
        root.retire()
