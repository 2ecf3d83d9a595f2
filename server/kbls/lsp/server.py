"""`kbls serve`: the pygls language server in front of the daemon (`kbls.daemon.service`).

Handlers are thin: validate params (`kbls.lsp.wire`), make one daemon call, convert the answer
(`kbls.lsp.convert`).
Blocking work (embedding, SQLite) runs in thread pools; the handlers themselves are `async` and
await those pools, so that pygls can cancel them: a `$/cancelRequest` cancels the awaiting task,
which answers `RequestCancelled` and drops the result even when the thread already started.
Searches share one thread, so a superseded search still queued behind the current one is
dropped before it runs. Everything the worker thread tells the client (progress, status,
messages) is handed to the event loop with `call_soon_threadsafe`; only that thread writes.

A client that can register `workspace/didChangeWatchedFiles` dynamically is asked for every
file of its folders once initialized: the daemon takes those events with its own watcher's
(`kbls.daemon.watch`), so changes made outside the editor still index where the daemon cannot
watch (no inotify watch left, `KBLS_NO_WATCH=1`).
"""

from __future__ import annotations

import os

# One BLAS thread: a query's matrix-vector product over the in-memory vectors is memory-bound
# (~3 ms at 50k x 384 on one core); with two OpenBLAS threads on a busy two-core machine the
# threads wait for each other and the median tripled (docs/adr/0001-vector-search.md). Must be
# set before numpy is first imported (kbls.daemon.service imports it).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import asyncio
import logging
import sys
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Protocol, TypeVar

from lsprotocol import types
from pygls.exceptions import FeatureRequestError, JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from kbls import __version__
from kbls.daemon import answers
from kbls.daemon.service import Daemon
from kbls.daemon.watch import FileChange
from kbls.engine import Engine
from kbls.errors import BeingReopenedError, OutsideRootError, QueryError
from kbls.limits import MAX_QUERY_CHARS, RELATED_LIMIT
from kbls.links.suggest import LinkQuery, Resolved, Suggestions
from kbls.links.syntax import LinkRef
from kbls.logsetup import configure_logging
from kbls.lsp import (
    codeactions,
    codelens,
    convert,
    diagnostics,
    documents,
    framing,
    hover,
    links,
    outline,
    pygls_compat,
    references,
    rename,
    textsync,
    wire,
)
from kbls.lsp.progress import ProgressTokens
from kbls.lsp.uris import client_uri, file_uri

log = logging.getLogger(__name__)
T = TypeVar("T")

INDEX_STATUS = "kb/indexStatus"
SYMBOL_LIMIT = 50
#: the client watches every file of its folders for us: the daemon's rules decide what is indexed.
WATCHED_FILES = types.RegistrationParams([
    types.Registration(
        "kbls-watched-files", types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        types.DidChangeWatchedFilesRegistrationOptions([types.FileSystemWatcher("**/*")]),
    )
])

_MESSAGE_TYPES = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
}


class KblsProtocol(pygls_compat.ForgetNotificationFutures, LanguageServerProtocol):
    """Answers malformed params of standard methods with `InvalidParams`; forgets each handled
    notification's future (`kbls.lsp.pygls_compat`).

    pygls raises while deserialising such a message and drops it, which would leave the client
    waiting for an answer that never comes.
    """

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data:
                error = JsonRpcInvalidParams(f"invalid params for {data['method']}: {exc.__cause__ or exc}")
                pygls_compat.send_error(self, data["id"], error.to_response_error())
            return SimpleNamespace(jsonrpc="dropped")  # handle_message ignores it


class RequestFailed(JsonRpcException):
    """LSP's `RequestFailed`: a valid request the server could not answer now (e.g. a store being rebuilt)."""

    CODE = -32803


class DaemonFacade(Protocol):
    """What the handlers call: this process's `Daemon`, or one connection's view of the per-user
    daemon shared by several clients (`kbls.userdaemon.connection`)."""

    def configure(self, overrides: dict[str, Any] | None) -> None: ...
    def start(self, folders: list[tuple[str, Path]]) -> None: ...
    def shutdown(self, timeout: float = 5.0) -> None: ...
    def add_root(self, uri: str, path: Path | str) -> None: ...
    def remove_root(self, path: Path | str) -> None: ...
    def file_saved(self, path: Path | str) -> bool: ...
    def note_opened(self, path: Path | str, opened: bool = True) -> None: ...
    def files_changed(self, changes: list[FileChange]) -> None: ...
    def reindex(self, paths: list[Path] | None, force: bool = False) -> int: ...
    def search(self, request: answers.SearchRequest) -> answers.SearchAnswer: ...
    def related(self, path: Path | str, line: int | None = None, limit: int = RELATED_LIMIT) -> answers.SearchAnswer: ...
    def status(self) -> answers.DaemonStatus: ...
    def link_suggestions(self, path: Path | str, query: LinkQuery) -> Suggestions: ...
    def resolve_links(self, path: Path | str, refs: list[LinkRef], lines: list[str]) -> Resolved: ...
    def tags(self, prefix: str, limit: int) -> answers.TagsAnswer: ...
    def notes(self, request: answers.NotesRequest) -> answers.NotesAnswer: ...
    def in_root(self, path: Path | str, ask: Callable[[Engine, str], T]) -> answers.InRoot[T]: ...


class KblsServer(LanguageServer):
    """The language server; `initialize` configures the daemon and `initialized` starts it.

    :param daemon: what the handlers drive (default: a `Daemon` of this process, told through
        this server); the per-user daemon passes one connection's view of its shared daemon.
    :param protocol_cls: the per-user daemon's connections keep the process alive on `exit`.
    """

    def __init__(self, daemon: DaemonFacade | None = None, protocol_cls: type[KblsProtocol] = KblsProtocol) -> None:
        super().__init__(
            "kbls", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=protocol_cls,
        )
        self.daemon: DaemonFacade = daemon if daemon is not None else Daemon(self)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._configured = False
        self._started = False
        #: the client can register `workspace/didChangeWatchedFiles` (set by `initialize`).
        self._client_watches = False
        self._registering: asyncio.Task[None] | None = None
        # One search thread: searches are CPU-bound on a few cores anyway, and a superseded
        # search waiting here is cancelled before it starts.
        self.search_pool = ThreadPoolExecutor(1, thread_name_prefix="kbls-search")
        self.query_pool = ThreadPoolExecutor(2, thread_name_prefix="kbls-query")
        self.progress_tokens = ProgressTokens(self, self._later)
        self._folders: list[tuple[str, Path]] = []
        #: each feature module's per-connection state, by its class (`kbls.lsp.featurestate`).
        self.feature_states: dict[object, object] = {}

    # -- lifecycle -------------------------------------------------------------------------
    def setup(self, params: types.InitializeParams) -> None:
        self.loop = asyncio.get_running_loop()
        documents.adopt(self.workspace)  # lines as LSP counts them (kbls.lsp.documents)
        options = params.initialization_options
        if options == []:  # Neovim encodes an empty Lua table as an array: no options
            options = None
        if options is not None and not isinstance(options, dict):
            self.show_message(logging.WARNING, "kbls: initializationOptions must be an object; ignoring them")
            options = None
        self.daemon.configure(options)
        self._folders = _folders(params)
        self._client_watches = _watches_files(params.capabilities)
        self._configured = True

    def start(self) -> None:
        """Start the daemon once `initialize` said which folders to serve."""
        if self._configured and not self._started:
            self._started = True
            self.daemon.start(self._folders)

    def watch_files(self) -> None:
        """Ask a client that can for `workspace/didChangeWatchedFiles` (once, when initialized)."""
        if self._client_watches and self._registering is None and self.loop is not None:
            self._registering = self.loop.create_task(self._register_file_events())

    async def _register_file_events(self) -> None:
        try:
            await self.client_register_capability_async(WATCHED_FILES)
        except Exception as exc:  # the client's own business; the daemon's watcher still runs
            log.warning("the client did not register workspace/didChangeWatchedFiles: %s", exc)

    def shutdown(self) -> None:
        self.daemon.shutdown()
        self.search_pool.shutdown(wait=False, cancel_futures=True)
        self.query_pool.shutdown(wait=False, cancel_futures=True)
        super().shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Request errors went back in their response (logged at INFO); show the rest."""
        if source is FeatureRequestError:
            log.info("request failed: %s", error)
            return
        log.error("%s: %s", getattr(source, "__name__", source), error)
        super().report_server_error(error, source)

    async def call(self, pool: Executor, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn` in `pool`; daemon errors about the request become JSON-RPC errors."""
        self.start()
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)
        except (QueryError, OutsideRootError) as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        except BeingReopenedError as exc:  # a store being rebuilt, a root being reopened
            raise RequestFailed(str(exc)) from None

    # -- the daemon's listener (called from the worker thread) -------------------------------
    def _later(self, fn: Callable[..., Any], *args: Any) -> None:
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(fn, *args)

    def index_status(self, status: answers.IndexState) -> None:
        self._later(self.protocol.notify, INDEX_STATUS, wire.to_wire(convert.index_status(status)))
        self._later(diagnostics.index_changed, self, status)

    def log_message(self, level: int, message: str) -> None:
        log.log(level, "%s", message)
        params = types.LogMessageParams(type=_MESSAGE_TYPES.get(level, types.MessageType.Log), message=message)
        self._later(self.window_log_message, params)

    def show_message(self, level: int, message: str) -> None:
        log.log(level, "%s", message)
        params = types.ShowMessageParams(type=_MESSAGE_TYPES.get(level, types.MessageType.Log), message=message)
        self._later(self.window_show_message, params)

    def progress_begin(self, title: str, message: str) -> object:
        if self.loop is None:  # not initialized yet (a CLI connection of the per-user daemon): no capabilities
            return None
        return self.progress_tokens.begin(title, message)

    def progress_report(self, handle: object, percentage: int, message: str) -> None:
        self.progress_tokens.report(handle, percentage, message)

    def progress_end(self, handle: object, message: str) -> None:
        self.progress_tokens.end(handle, message)


def _folders(params: types.InitializeParams) -> list[tuple[str, Path]]:
    """Workspace folders as (uri, path); falls back to rootUri / rootPath."""
    uris = [f.uri for f in params.workspace_folders or []]
    if not uris and params.root_uri:
        uris = [params.root_uri]
    out = []
    for uri in uris:
        path = client_uri(uri).path
        if path is not None:
            out.append((uri, path))
        else:
            log.warning("ignoring workspace folder %s: not a file:// URI", uri)
    if not out and params.root_path:
        out.append((file_uri(params.root_path), Path(params.root_path)))
    return out


def _watches_files(capabilities: types.ClientCapabilities) -> bool:
    """The client can register `workspace/didChangeWatchedFiles` at run time."""
    workspace = capabilities.workspace
    watched = workspace.did_change_watched_files if workspace is not None else None
    return bool(watched is not None and watched.dynamic_registration)


def _path(uri: str) -> Path:
    """The file path of a `file://` URI; anything else is `InvalidParams`."""
    path = client_uri(uri).path if isinstance(uri, str) else None
    if path is None:
        raise JsonRpcInvalidParams(f"uri must be a file:// URI, not {uri!r}")
    return path


server = KblsServer()
links.register(server)  # completion, definition, documentLink (kbls.lsp.links)
hover.register(server)  # related notes on headings and links (kbls.lsp.hover)
for feature in (textsync, outline, diagnostics, codeactions):  # open documents, outline, link problems
    feature.register(server)
for feature in (references, rename, codelens):  # references, kb/backlinks; renames; backlink counts
    feature.register(server)


@server.feature(types.INITIALIZE)
def initialize(ls: KblsServer, params: types.InitializeParams) -> None:
    ls.setup(params)


@server.feature(types.INITIALIZED)
def initialized(ls: KblsServer, params: types.InitializedParams) -> None:
    ls.start()
    ls.watch_files()


@server.feature(types.SHUTDOWN)
async def shutdown(ls: KblsServer, params: Any) -> None:
    # Stopping the worker may wait for the batch it is embedding: not on the event loop.
    await asyncio.get_running_loop().run_in_executor(None, ls.daemon.shutdown)


@server.feature("kb/search")
async def kb_search(ls: KblsServer, params: Any) -> Any:
    request = convert.search_request(wire.parse(params, wire.SearchParams))
    answer = await ls.call(ls.search_pool, ls.daemon.search, request)
    return wire.to_wire(convert.search_result(answer))


@server.feature("kb/related")
async def kb_related(ls: KblsServer, params: Any) -> Any:
    request = wire.parse(params, wire.RelatedParams)
    line = request.position.line if request.position else None
    answer = await ls.call(ls.query_pool, ls.daemon.related, _path(request.uri), line, request.limit)
    return wire.to_wire(convert.search_result(answer))


@server.feature("kb/status")
async def kb_status(ls: KblsServer, params: Any) -> Any:
    return wire.to_wire(convert.status_result(await ls.call(ls.query_pool, ls.daemon.status)))


@server.feature("kb/reindex")
async def kb_reindex(ls: KblsServer, params: Any) -> Any:
    request = wire.parse(params, wire.ReindexParams)
    paths = [_path(uri) for uri in request.uris] if request.uris is not None else None
    queued = await ls.call(ls.query_pool, ls.daemon.reindex, paths, request.force)
    return wire.to_wire(wire.ReindexResult(queued=queued))


@server.feature("kb/tags")
async def kb_tags(ls: KblsServer, params: Any) -> Any:
    request = wire.parse(params, wire.TagsParams)
    answer = await ls.call(ls.query_pool, ls.daemon.tags, request.prefix, request.limit)
    return wire.to_wire(convert.tags_result(answer))


@server.feature("kb/notes")
async def kb_notes(ls: KblsServer, params: Any) -> Any:
    request = convert.notes_request(wire.parse(params, wire.NotesParams))
    answer = await ls.call(ls.query_pool, ls.daemon.notes, request)
    return wire.to_wire(convert.notes_result(answer))


@server.feature(types.WORKSPACE_SYMBOL)
async def workspace_symbol(ls: KblsServer, params: types.WorkspaceSymbolParams) -> list[types.SymbolInformation]:
    if not params.query.strip():
        return []
    request = answers.SearchRequest(query=params.query[:MAX_QUERY_CHARS], limit=SYMBOL_LIMIT)
    return convert.symbols(await ls.call(ls.search_pool, ls.daemon.search, request))


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: KblsServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.start()
    path = client_uri(params.text_document.uri).path
    if path is not None:
        ls.daemon.file_saved(path)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: KblsServer, params: types.DidChangeWatchedFilesParams) -> None:
    ls.start()
    ls.daemon.files_changed(convert.file_changes(params))


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def did_change_folders(ls: KblsServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    for folder in params.event.removed:
        if (path := client_uri(folder.uri).path) is not None:
            ls.daemon.remove_root(path)
    for folder in params.event.added:
        if (path := client_uri(folder.uri).path) is not None:
            ls.daemon.add_root(folder.uri, path)


# -- entry point ---------------------------------------------------------------------------
def _configure_logging(log_file: str | None, level: str) -> None:
    numeric = configure_logging(log_file, level, "%(asctime)s %(levelname)s %(name)s: %(message)s")
    # pygls logs every message it sends at INFO: keep that for --log-level DEBUG only.
    logging.getLogger("pygls").setLevel(numeric if numeric <= logging.DEBUG else logging.WARNING)


def _parse_tcp(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not port.isdigit():
        raise SystemExit(f"kbls: --tcp expects HOST:PORT or PORT, not {value!r}")
    return host or "127.0.0.1", int(port)


def serve(tcp: str | None = None, log_file: str | None = None, log_level: str = "INFO") -> int:
    """Run the language server until the client disconnects; stdio unless `tcp` is given."""
    _configure_logging(log_file, log_level)
    log.info("kbls %s serving (pid %d)", __version__, os.getpid())
    if tcp:
        host, port = _parse_tcp(tcp)
        framing.serve_tcp(server, host, port)
        return 0
    # stdout carries the protocol: anything else that writes to fd 1 (a library's print, a C
    # extension's warning) would corrupt it, so fd 1 becomes stderr and the protocol keeps a
    # private duplicate of the real stdout.
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    framing.serve_stdio(server, sys.stdin.buffer, protocol_out)
    return 0
