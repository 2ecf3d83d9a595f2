"""The host every language-server connection drives: one `Daemon` (model, engines, index
queue) and each client's view of it. `kbls serve --standalone` hosts one connection over stdio,
the per-user `kbls daemon` one per socket connection; the handlers cannot tell them apart.

Each client holds its own workspace folders (`ClientView`). A folder is opened in the daemon when
the first client names it and closed when the last one lets go (reference counts keyed by the
folder as spelled), so two windows on one folder share one engine, one store and one index
queue, and a save is embedded once however many windows show the note. Everything the daemon
tells its front end (index state, progress, messages) goes to every connected client.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, TypeVar

from kbls.daemon.answers import (
    DaemonStatus,
    IndexState,
    InRoot,
    Listener,
    NotesAnswer,
    NotesRequest,
    SearchAnswer,
    SearchRequest,
    TagsAnswer,
)
from kbls.daemon.roots import Root, folder_path
from kbls.daemon.service import Daemon
from kbls.daemon.watch import FileChange
from kbls.engine import Engine
from kbls.errors import OutsideRootError
from kbls.limits import RELATED_LIMIT
from kbls.links.suggest import LinkQuery, Resolved, Suggestions
from kbls.links.syntax import LinkRef

log = logging.getLogger(__name__)
T = TypeVar("T")


class FanOut:
    """A `Listener` that hands every call to each connected client's listener."""

    def __init__(self) -> None:
        # Guards _clients: connections come and go on the event loop, the worker calls from its thread.
        self._lock = threading.Lock()
        self._clients: list[Listener] = []

    def add(self, client: Listener) -> None:
        with self._lock:
            self._clients.append(client)

    def remove(self, client: Listener) -> None:
        with self._lock:
            if client in self._clients:
                self._clients.remove(client)

    def count(self) -> int:
        with self._lock:
            return len(self._clients)

    def _each(self) -> list[Listener]:
        with self._lock:
            return list(self._clients)

    def index_status(self, status: IndexState) -> None:
        for client in self._each():
            client.index_status(status)

    def progress_begin(self, title: str, message: str) -> object:
        # One handle per client that showed a progress UI; reports go to those clients only.
        return {id(c): (c, c.progress_begin(title, message)) for c in self._each()}

    def progress_report(self, handle: object, percentage: int, message: str) -> None:
        for client, own in _handles(handle):
            client.progress_report(own, percentage, message)

    def progress_end(self, handle: object, message: str) -> None:
        for client, own in _handles(handle):
            client.progress_end(own, message)

    def log_message(self, level: int, message: str) -> None:
        self._fan_out_message(level, message, lambda client: client.log_message)

    def show_message(self, level: int, message: str) -> None:
        self._fan_out_message(level, message, lambda client: client.show_message)

    def _fan_out_message(self, level: int, message: str, method: Callable[[Listener], Callable[[int, str], None]]) -> None:
        """Hand `message` to `method` of each client; logged here when no client is connected."""
        clients = self._each()
        if not clients:  # each client's server logs what it is told
            log.log(level, "%s", message)
        for client in clients:
            method(client)(level, message)


def _handles(handle: object) -> list[tuple[Listener, object]]:
    if not isinstance(handle, dict):
        return []
    return [pair for pair in handle.values() if isinstance(pair, tuple) and len(pair) == 2]


class SharedDaemon:
    """The one `Daemon` of the process and the roots its clients hold."""

    def __init__(self, *, watch: bool = True) -> None:
        self.listeners = FanOut()
        self.daemon = Daemon(self.listeners, watch=watch)
        # Guards _refs, _overrides and _configured (event loop and handler threads). Held while
        # the daemon is asked to open or close a folder (that only queues it for the worker), so
        # the requests land in the order the counts changed: a close asked after the lock was let
        # go could land after another client's open and leave that client a closed folder.
        self._lock = threading.Lock()
        #: clients holding each open folder, by the folder as spelled
        self._refs: dict[str, int] = {}
        self._overrides: dict[str, Any] | None = None
        self._configured = False
        self._started = False

    def start(self) -> None:
        """Start the index worker (once; the first client starts it where nobody did before)."""
        with self._lock:
            started, self._started = self._started, True
        if not started:
            self.daemon.start([])

    def shutdown(self) -> None:
        self.daemon.shutdown()

    def configure(self, overrides: dict[str, Any] | None) -> str | None:
        """Apply the first client's `initializationOptions` to every root; a warning if a later
        client's differ (the options are per daemon, as they were per `kbls serve`)."""
        with self._lock:
            if not self._configured:
                self._configured = True
                self._overrides = overrides or None
                self.daemon.configure(self._overrides)
                return None
            if (overrides or None) == self._overrides:
                return None
        return (
            "kbls: this window's initializationOptions differ from those the shared kbls daemon was started "
            "with; the daemon keeps the first ones (set them in .kbls.yaml, or run this editor's server with "
            "KBLS_NO_DAEMON=1)"
        )

    def acquire(self, uri: str, path: Path | str) -> None:
        """A client serves `path`: open it unless another client already did."""
        key = str(folder_path(path))
        with self._lock:
            count = self._refs.get(key, 0)
            self._refs[key] = count + 1
            if count == 0:
                log.info("opening %s for its first client", key)
                self.daemon.add_root(uri, path)

    def release(self, path: Path | str) -> None:
        """A client no longer serves `path`: close it once no client does."""
        key = str(folder_path(path))
        with self._lock:
            count = self._refs.get(key, 0) - 1
            if count > 0:
                self._refs[key] = count
            else:
                self._refs.pop(key, None)
            if count == 0:
                log.info("closing %s: its last client left", key)
                self.daemon.remove_root(path)


class ClientView:
    """One client's part of the shared daemon: what the handlers of its connection call.

    Searches, status and reindex see only roots at or inside the client's folders,
    related/saves/reindex of a path outside them are refused, and the folders are released when
    the client leaves.
    """

    def __init__(self, host: SharedDaemon) -> None:
        self.host = host
        #: the client's connection (messages for it alone); set once it is made
        self.listener: Listener | None = None
        # Guards _folders and _configured: changed on the event loop, read by the search and query threads.
        self._lock = threading.Lock()
        self._folders: dict[str, Path] = {}
        self._overrides: dict[str, Any] | None = None
        #: this client has offered its options to the shared daemon (with its first folder)
        self._configured = False

    def folders(self) -> list[Path]:
        with self._lock:
            return list(self._folders.values())

    # -- lifecycle -------------------------------------------------------------------------
    def configure(self, overrides: dict[str, Any] | None) -> None:
        """Kept until this client's first folder: only a client that serves folders configures
        the shared daemon (the CLI's and `kbls mcp`'s sessions name none and must not decide)."""
        self._overrides = overrides

    def start(self, folders: list[tuple[str, Path]]) -> None:
        for uri, path in folders:
            self.add_root(uri, path)
        # After the folders: a worker started with nothing queued would end its first progress at once.
        self.host.start()
        if self.listener is not None:  # the daemon may be ready already: no change would tell this client
            self.host.daemon.tell_state(self.listener)

    def shutdown(self) -> None:
        """Let go of this client's folders (the shared daemon keeps running)."""
        with self._lock:
            held, self._folders = list(self._folders.values()), {}
        for folder in held:
            self.host.release(folder)

    def add_root(self, uri: str, path: Path | str) -> None:
        folder = folder_path(path)
        with self._lock:
            if str(folder) in self._folders:
                return
            self._folders[str(folder)] = folder
            first, self._configured = not self._configured, True
        if first:  # before the folder opens: the first such client's options open it
            warning = self.host.configure(self._overrides)
            if warning and self.listener is not None:
                self.listener.show_message(logging.WARNING, warning)
        self.host.acquire(uri, folder)

    def remove_root(self, path: Path | str) -> None:
        folder = folder_path(path)
        with self._lock:
            held = self._folders.pop(str(folder), None)
        if held is not None:
            self.host.release(held)

    # -- requests --------------------------------------------------------------------------
    def holds(self, path: Path | str) -> bool:
        """`path` lies in one of this client's folders (as spelled, or with symlinks resolved)."""
        candidates = _spellings(folder_path(path))
        for folder in self.folders():
            bases = _spellings(folder)
            if any(c.is_relative_to(b) for c in candidates for b in bases):
                return True
        return False

    def _check(self, path: Path | str) -> None:
        """:raises OutsideRootError: unless `path` is in this client's folders and the root that
        would answer for it is too (not another client's folder above this one's, which answers
        while this client's folder is not open: still opening, or refused)."""
        if not self.holds(path):
            raise OutsideRootError(f"{path} is outside every workspace folder")
        try:
            found = self.host.daemon.locate(path)
        except OutsideRootError:
            return  # the daemon refuses it itself
        if not self._serves(found.root):
            raise OutsideRootError(f"{path}: its workspace folder is not open (yet) in kbls")

    def _serves(self, root: Root) -> bool:
        """`root` is at or inside one of this client's folders (either spelled or resolved)."""
        bases = [base for folder in self.folders() for base in _spellings(folder)]
        return any(place.is_relative_to(base) for place in (root.folder, root.real) for base in bases)

    def file_saved(self, path: Path | str) -> bool:
        return self.holds(path) and self.host.daemon.file_saved(path)

    def note_opened(self, path: Path | str, opened: bool = True) -> None:
        if self.holds(path):
            self.host.daemon.note_opened(path, opened)

    def files_changed(self, changes: Collection[FileChange]) -> None:
        self.host.daemon.files_changed([c for c in changes if self.holds(c.path)])

    def reindex(self, paths: list[Path] | None, force: bool = False) -> int:
        if paths is None:
            return self.host.daemon.reindex(None, force, folders=self.folders())
        for path in paths:
            self._check(path)
        return self.host.daemon.reindex(paths, force)

    def search(self, request: SearchRequest) -> SearchAnswer:
        return self.host.daemon.search(request, folders=self.folders())

    def related(self, path: Path | str, line: int | None = None, limit: int = RELATED_LIMIT) -> SearchAnswer:
        self._check(path)
        return self.host.daemon.related(path, line, limit)

    def status(self) -> DaemonStatus:
        return self.host.daemon.status(folders=self.folders())

    def tags(self, prefix: str, limit: int) -> TagsAnswer:
        return self.host.daemon.tags(prefix, limit, folders=self.folders())

    def notes(self, request: NotesRequest) -> NotesAnswer:
        return self.host.daemon.notes(request, folders=self.folders())

    def link_suggestions(self, path: Path | str, query: LinkQuery) -> Suggestions:
        self._check(path)
        return self.host.daemon.link_suggestions(path, query)

    def resolve_links(self, path: Path | str, refs: list[LinkRef], lines: list[str]) -> Resolved:
        self._check(path)
        return self.host.daemon.resolve_links(path, refs, lines)

    def in_root(self, path: Path | str, ask: Callable[[Engine, str], T]) -> InRoot[T]:
        self._check(path)
        return self.host.daemon.in_root(path, ask)


def _spellings(path: Path) -> list[Path]:
    """`path` as spelled and with symlinks resolved (a loop or an unreadable folder: as spelled)."""
    try:
        return [path, path.resolve()]
    except (OSError, RuntimeError):
        return [path]
