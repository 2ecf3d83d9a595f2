"""The open workspace roots of the daemon: which folder is served by which engine.

Searches read the registry from the LSP's threads while the worker swaps roots in and out, so
its lock guards the map and each root's counters; a root's engine and watcher are replaced only
by swapping the whole `Root` (the old one retired: its engine leased no more, closed by the last
lease; the watcher takes the editor's file events through its locked debouncer). A file belongs
to the innermost open root that holds it, so nested roots never answer for the same note twice.

A root that cannot be opened (its `.kbls.yaml` refused: a store inside, at or above the root,
another root's store; or a store that cannot be written yet and cannot be read either) is kept
as a `RefusedRoot` with the reason, so `kb/status` lists it and the state reads `error` until it opens; the watcher of its
config file (or the timer of a store that cannot be written) asks for the next try. An open root
whose config is not in effect (invalid, so the defaults serve it; or edited to a refused store,
so its previous settings do) has a `RefusedRoot` entry too, without a watcher of its own.
A root whose store is read-only when it opens is served read-only (`Root.read_only`: searched,
not indexed) and opened again for writing by the reopen timer.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import InitVar, dataclass, field
from pathlib import Path

from kbls.config import CONFIG_FILE, Config
from kbls.daemon.watch import ConfigWatcher, RootWatcher
from kbls.engine import Engine
from kbls.errors import BeingReopenedError, OutsideRootError
from kbls.indexing.embed import Embedder
from kbls.indexing.pipeline import IndexPipeline
from kbls.indexing.scan import Scanner
from kbls.lease import Leased

log = logging.getLogger(__name__)

#: seconds between two checks of a root's store file by searches: `Store.replaced()` costs about
#: 0.4 ms (a stat and a read-only query), which every search would otherwise pay.
STORE_CHECK_INTERVAL = 1.0


@dataclass
class Root:
    """One open root. `files`, `chunks` and `error` are written under the registry's lock.

    Its engine is reachable only through `lease()` (`kbls.lease`): a reopen publishes a new
    `Root` and retires this one, whose engine the last lease in flight closes. What needs no
    store (the folder, the config, the scanner's rules, the store's place) is read directly.
    """

    uri: str
    #: the folder as the client names it (not symlink-resolved), so hit URIs match its buffers.
    folder: Path
    engine: InitVar[Engine]
    #: set before the root is published and never reassigned (closing stops it).
    watcher: RootWatcher | None = None
    files: int = 0
    chunks: int = 0
    #: why indexing this root fails (None: it does not); cleared by the next successful job.
    error: str | None = None
    #: its store was found deleted or replaced and a reopen was asked for (once per Root).
    replaced: bool = False
    #: when (monotonic) a search last checked the store file (see `RootRegistry.check_due`).
    checked_at: float = 0.0
    _engine: Leased[Engine] = field(init=False, repr=False, compare=False)
    #: the engine's store-free facts, kept so that no caller needs the engine for them.
    real: Path = field(init=False)
    config: Config = field(init=False, repr=False)
    scanner: Scanner = field(init=False, repr=False)
    store_dir: Path = field(init=False)
    store_path: Path = field(init=False, repr=False)
    read_only: bool = field(init=False)
    embedder: Embedder = field(init=False, repr=False)
    _totals: IndexPipeline = field(init=False, repr=False, compare=False)

    def __post_init__(self, engine: Engine) -> None:
        self._engine = Leased(engine, _close_engine, str(self.folder))
        self.real, self.config, self.scanner = engine.root, engine.config, engine.scanner
        self.store_dir, self.store_path, self.read_only = engine.store_dir, engine.store_path, engine.read_only
        self.embedder, self._totals = engine.embedder, engine.pipeline

    @property
    def key(self) -> str:
        return str(self.folder)

    def lease(self) -> contextlib.AbstractContextManager[Engine]:
        """`with root.lease() as engine:` the only way to the engine.

        :raises BeingReopenedError: the root was retired (reopened or closed) meanwhile.
        """
        return self._engine.lease()

    def retire(self) -> None:
        """No new lease; the engine is closed now or by the last lease in flight."""
        self._engine.retire()

    @property
    def retired(self) -> bool:
        return self._engine.retired

    @property
    def embedded_total(self) -> int:
        """Texts embedded since this root's engine started (a counter: no store read)."""
        return self._totals.embedded_total

    @property
    def reused_total(self) -> int:
        return self._totals.reused_total

    def store_replaced(self) -> bool:
        """The store file vanished or another store took its name (a stat and a tiny query).

        Asked twice when the first answer is yes: a generation that could not be read for a
        moment (a checkpoint holding a lock) must not make the daemon reopen a healthy store.
        A retired root answers no: it is being reopened already.
        """
        try:
            with self.lease() as engine:
                return engine.store.replaced() and engine.store.replaced()
        except BeingReopenedError:
            return False


def _close_engine(engine: Engine) -> None:
    try:
        engine.close()
    except Exception:
        log.exception("cannot close the store of %s", engine.root)


@dataclass
class RefusedRoot:
    """A root whose config is not in effect, and why. Its watcher belongs to the registry
    (stopped when the root opens with its config or is removed)."""

    uri: str
    folder: Path
    #: the error as the user was shown it (without the folder in front), and what kbls does meanwhile.
    reason: str
    #: watches the config file of a root that is not open (an open root's own watcher does).
    watcher: ConfigWatcher | None = None

    @property
    def key(self) -> str:
        return str(self.folder)


@dataclass(frozen=True)
class RefusedView:
    """A copy of a refused root's fields, for status."""

    uri: str
    folder: Path
    reason: str


@dataclass(frozen=True)
class RootView:
    """A consistent copy of a root's shared fields, for status and fan-out."""

    root: Root
    files: int
    chunks: int
    error: str | None


@dataclass(frozen=True)
class Located:
    root: Root
    #: posix path relative to the root.
    rel: str


def folder_path(path: Path | str) -> Path:
    """An absolute folder path, `~` expanded, symlinks kept (as the client names it)."""
    return Path(os.path.abspath(os.path.expanduser(str(path))))


class RootRegistry:
    """Open roots by folder, and the roots waiting to be opened again after a failed open."""

    def __init__(self) -> None:
        # Guards _roots, every Root's files/chunks/error/replaced/checked_at, _refused and
        # _reopening (LSP, worker, watcher and Timer threads). Never held while a watcher stops.
        self._lock = threading.Lock()
        self._roots: dict[str, Root] = {}
        #: roots that could not be opened, by folder (an open root's refused new config too).
        self._refused: dict[str, RefusedRoot] = {}
        #: folders whose store could not be written at open: a timer opens them again.
        self._reopening: set[str] = set()

    # -- the map -------------------------------------------------------------------------------
    def get(self, key: str) -> Root | None:
        with self._lock:
            return self._roots.get(key)

    def put(self, root: Root) -> Root | None:
        """Serve `root` from now on; returns the root it replaces (to be closed). A read-only root
        stays reopening: its timer opens it for writing once its store can be written."""
        with self._lock:
            old = self._roots.get(root.key)
            self._roots[root.key] = root
            if not root.read_only:
                self._reopening.discard(root.key)
            return old

    def pop(self, key: str) -> Root | None:
        with self._lock:
            return self._roots.pop(key, None)

    def pop_all(self) -> list[Root]:
        """Every open root (to be closed); the refused ones are forgotten, their watchers stopped."""
        with self._lock:
            roots = list(self._roots.values())
            refused = list(self._refused.values())
            self._roots.clear()
            self._refused.clear()
            self._reopening.clear()
        for entry in refused:
            _stop(entry)
        return roots

    def all(self) -> list[Root]:
        with self._lock:
            return list(self._roots.values())

    def views(self) -> list[RootView]:
        with self._lock:
            return [RootView(r, r.files, r.chunks, r.error) for r in self._roots.values()]

    def known_files(self, key: str) -> int:
        with self._lock:
            root = self._roots.get(key)
            return root.files if root is not None else 0

    # -- a root's shared fields ----------------------------------------------------------------
    def set_counts(self, root: Root, files: int, chunks: int) -> None:
        with self._lock:
            root.files, root.chunks = files, chunks

    def set_error(self, root: Root, reason: str | None) -> str | None:
        """Record why indexing fails (None: it works); returns the previous reason."""
        with self._lock:
            previous, root.error = root.error, reason
            return previous

    def claim_replaced(self, root: Root) -> bool:
        """True for the first caller to find this root's store replaced (it asks for the reopen)."""
        with self._lock:
            if root.replaced:
                return False
            root.replaced = True
            return True

    def check_due(self, root: Root, now: float) -> bool:
        """True at most once per STORE_CHECK_INTERVAL per root: time for a search to check the store."""
        with self._lock:
            if now - root.checked_at < STORE_CHECK_INTERVAL:
                return False
            root.checked_at = now
            return True

    # -- reopen after a failed open ------------------------------------------------------------
    def schedule_reopen(self, key: str, delay: float, reopen: Callable[[], None]) -> None:
        """Call `reopen` after `delay` unless the root is removed first.

        The root counts as reopening from now until it is opened (`put`) or removed
        (`cancel_reopen`), so a failure is shown once, not at every retry.
        """
        with self._lock:
            self._reopening.add(key)

        def fire() -> None:
            with self._lock:
                if key not in self._reopening:
                    return  # removed meanwhile
            reopen()

        timer = threading.Timer(delay, fire)
        timer.daemon = True
        timer.start()

    def is_reopening(self, key: str) -> bool:
        with self._lock:
            return key in self._reopening

    def cancel_reopen(self, key: str) -> None:
        """The root is removed: no timer opens it again, and it is no longer listed as refused."""
        with self._lock:
            self._reopening.discard(key)
            entry = self._refused.pop(key, None)
        if entry is not None:
            _stop(entry)

    # -- roots that could not be opened --------------------------------------------------------
    def refused(self, key: str) -> RefusedRoot | None:
        with self._lock:
            return self._refused.get(key)

    def refuse(self, entry: RefusedRoot) -> RefusedRoot | None:
        """List `entry` as refused (its watcher kept from the previous entry); returns that one."""
        with self._lock:
            previous = self._refused.get(entry.key)
            if previous is not None and entry.watcher is None:
                entry.watcher = previous.watcher
            self._refused[entry.key] = entry
            return previous

    def accept(self, key: str) -> bool:
        """The root opened: it is no longer refused (its config watcher stopped). True if it was."""
        with self._lock:
            entry = self._refused.pop(key, None)
        if entry is not None:
            _stop(entry)
        return entry is not None

    def refused_views(self) -> list[RefusedView]:
        with self._lock:
            return [RefusedView(r.uri, r.folder, r.reason) for r in self._refused.values()]

    def waiting_for_config(self, path: Path) -> RefusedRoot | None:
        """The root that could not be opened, if `path` is its config file (a change of which
        may let it open: the editor's file events stand in for its `ConfigWatcher`)."""
        if path.name != CONFIG_FILE:
            return None
        key = str(folder_path(path.parent))
        with self._lock:
            return None if key in self._roots else self._refused.get(key)

    # -- paths ---------------------------------------------------------------------------------
    def locate(self, path: Path | str) -> Located:
        """The innermost root holding `path` and the root-relative path; never reads the file.

        The path is tried as given (the client's spelling, which may run through a symlinked
        folder of the root) and then with symlinks resolved (a path that reaches the root
        through a symlinked folder).

        :raises OutsideRootError: when no root holds it.
        """
        given = folder_path(path)
        for target in (given, _resolved(given)):
            if target is None:
                continue
            found = self._innermost(target)
            if found is not None:
                return found
        raise OutsideRootError(f"{path} is outside every workspace folder")

    def owner(self, path: Path) -> Root | None:
        """The innermost root holding the absolute `path` (as spelled), None if none does."""
        found = self._innermost(path)
        return found.root if found is not None else None

    def _innermost(self, target: Path) -> Located | None:
        best: Located | None = None
        depth = -1
        for root in self.all():
            for base in (root.folder, root.real):
                try:
                    rel = target.relative_to(base)
                except ValueError:
                    continue
                if ".." in rel.parts:
                    continue
                if len(base.parts) > depth:
                    best, depth = Located(root, rel.as_posix()), len(base.parts)
                break
        return best


def _stop(entry: RefusedRoot) -> None:
    if entry.watcher is not None:
        entry.watcher.stop()
        entry.watcher = None


def _resolved(path: Path) -> Path | None:
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL in the path
        return None
    return resolved if resolved != path else None
