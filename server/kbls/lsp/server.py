"""The language server of one client connection: `make_server(host)` builds it over that client's
view of the shared host (`kbls.daemon.host`), with every feature module's handlers registered by
its `register(server)`. `kbls serve --standalone` makes one (`kbls.lsp.main`), the per-user
daemon one per socket connection (`kbls.userdaemon.listener`).

Handlers are thin: validate params (`kbls.protocol.wire`), make one call on the view, convert the
answer (`kbls.lsp.convert`). Blocking work (embedding, SQLite) runs in thread pools; the handlers
themselves are `async` and await those pools, so that pygls can cancel them: a `$/cancelRequest`
cancels the awaiting task, which answers `RequestCancelled` and drops the result even when the
thread already started. Searches share one thread, so a superseded search still queued behind
the current one is dropped before it runs. Everything the worker thread tells the client
(progress, status, messages) is handed to the event loop with `call_soon_threadsafe`; only that
thread writes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Generator
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import FeatureRequestError, JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from kbls import __version__, jsonrpc
from kbls.daemon import answers
from kbls.daemon.host import ClientView, SharedDaemon
from kbls.errors import BeingReopenedError, OutsideRootError, QueryError, StoreError
from kbls.lsp import (
    cliqueries,
    codeactions,
    codelens,
    convert,
    diagnostics,
    documents,
    hover,
    lifecycle,
    links,
    outline,
    pygls_compat,
    references,
    rename,
    requests,
    textsync,
)
from kbls.lsp.progress import ProgressTokens
from kbls.protocol import wire

log = logging.getLogger(__name__)
T = TypeVar("T")

INDEX_STATUS = "kb/indexStatus"
#: every feature module, each adding its handlers with `register(server)`
FEATURES = (
    lifecycle, requests, cliqueries, textsync, links, hover, outline, diagnostics, codeactions, references, rename,
    codelens,
)
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


class ConnectionProtocol(KblsProtocol):
    """`exit` closes this connection only: the process serves other clients (pygls's ends it)."""

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        if (user_handler := self.fm.features.get(types.EXIT)) is not None:
            yield user_handler, args, None
        writer = self.writer
        if writer is not None:
            writer.close()


class RequestFailed(JsonRpcException):
    """LSP's `RequestFailed`: a valid request the server could not answer now (e.g. a store being rebuilt)."""

    CODE = jsonrpc.REQUEST_FAILED


class KblsServer(LanguageServer):
    """One client's language server; `initialize` configures its view and `initialized` starts it.

    :param view: this client's part of the shared host, what every handler calls (`ls.daemon`).
    :param protocol_cls: `KblsProtocol` where `exit` ends the process, else `ConnectionProtocol`.
    """

    def __init__(self, view: ClientView, protocol_cls: type[KblsProtocol]) -> None:
        super().__init__(
            "kbls", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=protocol_cls,
        )
        self.daemon = view
        view.listener = self
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
    def setup(self, options: object, folders: list[tuple[str, Path]], client_watches: bool) -> None:
        """What `initialize` said: options, folders, whether the client can watch files for us."""
        self.loop = asyncio.get_running_loop()
        documents.adopt(self.workspace)  # lines as LSP counts them (kbls.lsp.documents)
        if options == []:  # Neovim encodes an empty Lua table as an array: no options
            options = None
        if options is not None and not isinstance(options, dict):
            self.show_message(logging.WARNING, "kbls: initializationOptions must be an object; ignoring them")
            options = None
        self.daemon.configure(options)
        self._folders = folders
        self._client_watches = client_watches
        self._configured = True

    def start(self) -> None:
        """Serve this client's folders once `initialize` said which they are."""
        if self._configured and not self._started:
            self._started = True
            self.daemon.start(self._folders)

    def watch_files(self) -> None:
        """Ask a client that can for `workspace/didChangeWatchedFiles` (once, when initialized).

        The daemon takes those events with its own watcher's (`kbls.daemon.watch`), so changes
        made outside the editor still index where the daemon cannot watch (no inotify watch
        left, `KBLS_NO_WATCH=1`)."""
        if self._client_watches and self._registering is None and self.loop is not None:
            self._registering = self.loop.create_task(self._register_file_events())

    async def _register_file_events(self) -> None:
        try:
            await self.client_register_capability_async(WATCHED_FILES)
        except Exception as exc:  # the client's own business; the daemon's watcher still runs
            log.warning("the client did not register workspace/didChangeWatchedFiles: %s", exc)

    def shutdown(self) -> None:
        self.daemon.host.listeners.remove(self)
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
        except (BeingReopenedError, StoreError) as exc:  # a store being rebuilt, a team store out of reach
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


def make_server(host: SharedDaemon, *, standalone: bool = False) -> KblsServer:
    """A language server for one client of `host`, every feature registered, told what the
    daemon says until it shuts down. `standalone`: the only client, whose `exit` ends the process."""
    server = KblsServer(ClientView(host), KblsProtocol if standalone else ConnectionProtocol)
    for feature in FEATURES:
        feature.register(server)
    host.listeners.add(server)
    return server
