"""One client of the per-user daemon: `kbls serve`'s language server, per socket connection.

`ConnectionServer` is the same pygls server as `kbls serve` (the handlers of `kbls.lsp.server`,
registered again on each connection), driving a `ClientView` of the shared daemon instead of a
daemon of its own. The view keeps this client's workspace folders: searches, status and reindex
see only roots at or inside them, related/saves/reindex of a path outside them are refused, and
the folders are released when the client leaves. `exit` ends the connection, not the process.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol.language_server import lsp_method

from kbls.daemon.answers import DaemonStatus, InRoot, NotesAnswer, NotesRequest, SearchAnswer, SearchRequest, TagsAnswer
from kbls.daemon.roots import Root, folder_path
from kbls.daemon.service import Daemon
from kbls.daemon.watch import FileChange
from kbls.engine import Engine
from kbls.errors import OutsideRootError
from kbls.links.suggest import LinkQuery, Resolved, Suggestions
from kbls.links.syntax import LinkRef
from kbls.lsp import wire
from kbls.lsp.server import KblsProtocol, KblsServer
from kbls.lsp.server import server as template
from kbls.userdaemon import queries
from kbls.userdaemon.host import SharedDaemon

log = logging.getLogger(__name__)
Q = TypeVar("Q")


class ConnectionProtocol(KblsProtocol):
    """`exit` closes this connection only (pygls's own handler ends the process)."""

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        if (user_handler := self.fm.features.get(types.EXIT)) is not None:
            yield user_handler, args, None
        writer = self.writer
        if writer is not None:
            writer.close()


class ClientView:
    """One client's part of the shared daemon (implements `kbls.lsp.server.DaemonFacade`)."""

    def __init__(self, host: SharedDaemon) -> None:
        self.host = host
        self.server: KblsServer | None = None
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
        if self.server is not None:  # the daemon may be ready already: no change would tell this client
            self.host.daemon.tell_state(self.server)

    def shutdown(self, timeout: float = 5.0) -> None:
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
            if warning and self.server is not None:
                self.server.show_message(logging.WARNING, warning)
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

    def files_changed(self, changes: list[FileChange]) -> None:
        self.host.daemon.files_changed([c for c in changes if self.holds(c.path)])

    def reindex(self, paths: list[Path] | None, force: bool = False) -> int:
        if paths is None:
            return self.host.daemon.reindex(None, force, folders=self.folders())
        for path in paths:
            self._check(path)
        return self.host.daemon.reindex(paths, force)

    def search(self, request: SearchRequest) -> SearchAnswer:
        return self.host.daemon.search(request, folders=self.folders())

    def related(self, path: Path | str, line: int | None = None, limit: int = 10) -> SearchAnswer:
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


    def in_root(self, path: Path | str, ask: Callable[[Engine, str], Q]) -> InRoot[Q]:
        self._check(path)
        return self.host.daemon.in_root(path, ask)


class ConnectionServer(KblsServer):
    """`kbls serve`'s server for one socket connection, on the shared daemon."""

    def __init__(self, host: SharedDaemon) -> None:
        self.view = ClientView(host)
        super().__init__(daemon=self.view, protocol_cls=ConnectionProtocol)
        self.view.server = self
        copy_features(template, self)
        for method, handler in CLI_FEATURES.items():
            self.feature(method)(handler)

    async def cli_answer(self, reply: Callable[[Daemon, Q], queries.Reply], query: Q) -> Any:
        """One CLI query on the query threads, as plain JSON (null: the root is not open here)."""
        daemon = self.view.host.daemon
        answer = await asyncio.get_running_loop().run_in_executor(self.query_pool, reply, daemon, query)
        return msgspec.to_builtins(answer)


def _spellings(path: Path) -> list[Path]:
    """`path` as spelled and with symlinks resolved (a loop or an unreadable folder: as spelled)."""
    try:
        return [path, path.resolve()]
    except (OSError, RuntimeError):
        return [path]


def copy_features(source: LanguageServer, target: LanguageServer) -> None:
    """Register `source`'s handlers on `target` (pygls binds each handler to one server)."""
    manager = source.protocol.fm
    for name, wrapped in manager.features.items():
        target.feature(name, manager.feature_options.get(name))(getattr(wrapped, "func", wrapped))


# -- the command line's queries (kbls.userdaemon.queries) ---------------------------------------
async def cli_search(ls: ConnectionServer, params: Any) -> Any:
    query = wire.parse(params, queries.SearchQuery)
    return await ls.cli_answer(queries.search_reply, query)


async def cli_related(ls: ConnectionServer, params: Any) -> Any:
    query = wire.parse(params, queries.RelatedQuery)
    return await ls.cli_answer(queries.related_reply, query)


async def cli_status(ls: ConnectionServer, params: Any) -> Any:
    query = wire.parse(params, queries.RootQuery)
    return await ls.cli_answer(queries.status_reply, query)


CLI_FEATURES = {queries.SEARCH: cli_search, queries.RELATED: cli_related, queries.STATUS: cli_status}
