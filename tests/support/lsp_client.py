"""The LSP test client: one real `kbls serve` subprocess driven by pygls's LanguageClient over stdio.

The client's event loop runs on a thread of its own, so tests and benchmarks are plain
synchronous code: `session.request("kb/search", {...})` returns the result as plain dicts (or
raises the JSON-RPC error), `session.search(...)`/`session.status()` return the typed wire
structs, `session.send(...)` returns a future so several requests can be in flight, and
`session.wait_for(predicate)` polls with a bound. Every notification the server sends
(`window/showMessage`, `window/logMessage`, `kb/indexStatus`) and every progress report is kept.
The child gets XDG_CACHE_HOME under the test's temp dir, so nothing touches the user's cache.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from kbls.protocol import wire

REQUEST_TIMEOUT = 60.0
INDEX_TIMEOUT = 120.0
#: the notifications kept, in arrival order, as (method, value) in `LspSession.notifications`
KEPT = (types.WINDOW_SHOW_MESSAGE, types.WINDOW_LOG_MESSAGE, "kb/indexStatus", types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

T = TypeVar("T")


def plain(value: Any) -> Any:
    """pygls hands custom results over as namedtuples: make them dicts again."""
    return wire._plain(value)


class LspSession:
    """One running `kbls serve` for `folders` and the client talking to it.

    `command` replaces `python -m kbls serve` (e.g. a wrapper script); `env` replaces the
    inherited environment; `progress` is the client's work-done-progress capability;
    `watched_files`: the client can register `workspace/didChangeWatchedFiles` (what the server
    registers is kept in `registrations`); `settings`: the client answers
    `workspace/configuration` from them (a section `kbls.hover` is read as `settings["kbls"]["hover"]`).
    `kbls serve` runs standalone (in-process, `KBLS_NO_DAEMON=1`) unless `daemon` is true: then
    it relays to the per-user daemon of the child's environment (tests/userdaemon).
    `text_document`, `workspace_edit` and `file_operations` are those client capabilities (None:
    not declared); `diagnostic_refresh`: the client takes `workspace/diagnostic/refresh` (counted
    in `refreshes`); `lens_refresh`: it takes `workspace/codeLens/refresh` (in `lens_refreshes`).
    """

    def __init__(
        self,
        folders: list[Path],
        tmp: Path,
        *,
        name: str = "kbls",
        init_options: Any = None,
        progress: bool = True,
        env: Mapping[str, str] | None = None,
        command: list[str] | None = None,
        log_level: str = "DEBUG",
        daemon: bool = False,
        watched_files: bool = False,
        text_document: types.TextDocumentClientCapabilities | None = None,
        workspace_edit: types.WorkspaceEditClientCapabilities | None = None,
        file_operations: types.FileOperationClientCapabilities | None = None,
        diagnostic_refresh: bool = False,
        lens_refresh: bool = False,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.folders = folders
        self.settings = settings
        self.registrations: list[types.Registration] = []
        self.refreshes = 0
        self.lens_refreshes = 0
        self.log_file = tmp / f"{name}-{time.monotonic_ns()}.log"
        self.notifications: list[tuple[str, Any]] = []
        self.progress: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.client = LanguageClient("kbls-tests", "0")
        self._register()
        cache = tmp / "xdg-cache"
        cache.mkdir(parents=True, exist_ok=True)
        child = dict(env or os.environ, XDG_CACHE_HOME=str(cache), PYTHONUNBUFFERED="1")
        if not daemon:
            child["KBLS_NO_DAEMON"] = "1"
        argv = command or [sys.executable, "-m", "kbls", "serve"]
        self._run(self.client.start_io(*argv, "--log-file", str(self.log_file), "--log-level", log_level, env=child))
        capabilities = types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=progress),
            workspace=types.WorkspaceClientCapabilities(
                workspace_folders=True,
                did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
                if watched_files else None,
                workspace_edit=workspace_edit,
                file_operations=file_operations,
                diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
                if diagnostic_refresh else None,
                code_lens=types.CodeLensWorkspaceClientCapabilities(refresh_support=True) if lens_refresh else None,
                configuration=settings is not None,
            ),
            text_document=text_document,
        )
        self.initialize_result: types.InitializeResult = self._run(
            self.client.initialize_async(
                types.InitializeParams(
                    process_id=os.getpid(),
                    capabilities=capabilities,
                    root_uri=folders[0].as_uri() if folders else None,
                    workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
                    initialization_options=init_options,
                )
            )
        )
        self.client.initialized(types.InitializedParams())

    def _register(self) -> None:
        """Keep what the server sends (pygls registers plain functions, not bound methods)."""
        for method in KEPT:
            self.client.feature(method)(self._keeper(method))

        def progress_created(params: types.WorkDoneProgressCreateParams) -> None:
            with self._lock:
                self.progress.append(("create", {"token": params.token}))

        def progress_reported(params: types.ProgressParams) -> None:
            value = params.value
            kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
            data = value if isinstance(value, dict) else plain(value)
            with self._lock:
                self.progress.append((str(kind), data if isinstance(data, dict) else {"value": data}))

        def capability_registered(params: types.RegistrationParams) -> None:
            with self._lock:
                self.registrations.extend(params.registrations)

        def diagnostics_refreshed(params: None) -> None:
            with self._lock:
                self.refreshes += 1

        self.client.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)(diagnostics_refreshed)

        def lenses_refreshed(params: None) -> None:
            with self._lock:
                self.lens_refreshes += 1

        self.client.feature(types.WORKSPACE_CODE_LENS_REFRESH)(lenses_refreshed)

        def configuration(params: types.ConfigurationParams) -> list[Any]:
            answers = []
            for item in params.items:
                value: Any = self.settings
                for key in (item.section or "").split("."):
                    if key:
                        value = value.get(key) if isinstance(value, Mapping) else None
                answers.append(value)
            return answers

        self.client.feature(types.WORKSPACE_CONFIGURATION)(configuration)
        self.client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)(progress_created)
        self.client.feature(types.CLIENT_REGISTER_CAPABILITY)(capability_registered)
        self.client.feature(types.PROGRESS)(progress_reported)

    def _keeper(self, method: str) -> Callable[[Any], None]:
        def keep(params: Any) -> None:
            if method.startswith("window/"):
                value = params.message
            elif method == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:  # an lsprotocol struct, as the wire has it
                value = self.client.protocol._converter.unstructure(params)
            else:
                value = plain(params)
            with self._lock:
                self.notifications.append((method, value))

        return keep

    # -- requests ------------------------------------------------------------------------------
    def _run(self, coro: Coroutine[Any, Any, T], timeout: float = REQUEST_TIMEOUT) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def send(self, method: str, params: Any = None, msg_id: str | None = None) -> concurrent.futures.Future[Any]:
        """Send a request without waiting: the future resolves to the plain result or raises its error.

        Requests sent in a row leave in that order; `msg_id` names one (to cancel it later).
        """
        box: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def settle(answer: concurrent.futures.Future[Any]) -> None:
            error = answer.exception()
            if error is not None:
                box.set_exception(error)
            else:
                box.set_result(plain(answer.result()))

        def go() -> None:
            self.client.protocol.send_request(method, params, msg_id=msg_id).add_done_callback(settle)

        self.loop.call_soon_threadsafe(go)
        return box

    def request(self, method: str, params: Any = None, timeout: float = REQUEST_TIMEOUT) -> Any:
        return self.send(method, params).result(timeout)

    def raw_request(self, method: str, params: Any, timeout: float = REQUEST_TIMEOUT) -> Any:
        """Send params exactly as given (no client-side typing), e.g. malformed ones."""
        msg_id = f"raw-{time.monotonic_ns()}"
        box: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def go() -> None:
            self.client.protocol._request_futures[msg_id] = box
            self.client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})

        self.loop.call_soon_threadsafe(go)
        return plain(box.result(timeout))

    def notify(self, method: str, params: Any) -> None:
        self.loop.call_soon_threadsafe(self.client.protocol.notify, method, params)

    def cancel(self, msg_id: str) -> None:
        self.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    def save(self, path: Path) -> None:
        """Tell the server the editor saved `path` (the test wrote it already)."""
        params = types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()))
        self.notify(types.TEXT_DOCUMENT_DID_SAVE, params)

    def search(self, query: str, **extra: Any) -> wire.SearchResult:
        return msgspec.convert(self.request("kb/search", {"query": query, **extra}), wire.SearchResult)

    def paths_found(self, query: str, **extra: Any) -> list[str]:
        return [hit.path for hit in self.search(query, **extra).hits]

    def status(self) -> wire.StatusResult:
        return msgspec.convert(self.request("kb/status", {}), wire.StatusResult)

    # -- documents the editor has open -------------------------------------------------------
    def open_document(self, path: Path, text: str, version: int = 1, uri: str | None = None) -> str:
        """didOpen `path` with `text` (not saved); `uri` names it as some client writes it
        (default: Python's `as_uri`, escaped as VS Code escapes). Returns the URI."""
        item = types.TextDocumentItem(uri=uri or path.as_uri(), language_id="markdown", version=version, text=text)
        self.notify(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=item))
        return item.uri

    def type_text(self, uri: str, line: int, character: int, text: str, version: int) -> None:
        """An incremental didChange: `text` inserted at (line, character)."""
        at = types.Position(line=line, character=character)
        change = types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=text)
        params = types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change]
        )
        self.notify(types.TEXT_DOCUMENT_DID_CHANGE, params)

    def complete(self, uri: str, line: int, character: int) -> types.CompletionList | None:
        """textDocument/completion as typing `[` asks for it."""
        params = types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character),
            context=types.CompletionContext(
                trigger_kind=types.CompletionTriggerKind.TriggerCharacter, trigger_character="["
            ),
        )
        result: Any = self._run(self.client.text_document_completion_async(params))
        assert result is None or isinstance(result, types.CompletionList)
        return result

    def definition(self, uri: str, line: int, character: int) -> list[types.Location]:
        params = types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)
        )
        result: Any = self._run(self.client.text_document_definition_async(params))
        return list(result or [])

    def document_links(self, uri: str) -> list[types.DocumentLink]:
        params = types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=uri))
        result: Any = self._run(self.client.text_document_document_link_async(params))
        return list(result or [])

    def hover(self, uri: str, line: int, character: int = 0) -> types.Hover | None:
        params = types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)
        )
        result: Any = self._run(self.client.text_document_hover_async(params))
        assert result is None or isinstance(result, types.Hover)
        return result

    # -- what the server sent ------------------------------------------------------------------
    def statuses(self) -> list[dict[str, Any]]:
        """`kb/indexStatus` notifications received so far."""
        with self._lock:
            return [p for m, p in self.notifications if m == "kb/indexStatus"]

    def diagnostics(self, uri: str) -> list[dict[str, Any]] | None:
        """The diagnostics last published for `uri` (None: none published yet)."""
        with self._lock:
            published = [p for m, p in self.notifications if m == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]
        mine = [p for p in published if p["uri"] == uri]
        return list(mine[-1]["diagnostics"]) if mine else None

    def shown(self) -> list[str]:
        """`window/showMessage` texts received so far."""
        with self._lock:
            return [p for m, p in self.notifications if m == types.WINDOW_SHOW_MESSAGE]

    def wait_for(self, predicate: Callable[[], T | None], timeout: float = INDEX_TIMEOUT, what: str = "") -> T:
        """The first truthy value of `predicate`, polled until `timeout` seconds have passed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}\n{self.log_tail()}")

    def wait_ready(self, timeout: float = INDEX_TIMEOUT) -> wire.StatusResult:
        """Until `kb/status` says ready with an empty queue and at least one root."""

        def ready() -> wire.StatusResult | None:
            status = self.status()
            return status if status.state == "ready" and status.queue == 0 and status.roots else None

        return self.wait_for(ready, timeout, "the index to be ready")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # -- the process ---------------------------------------------------------------------------
    @property
    def process(self) -> asyncio.subprocess.Process | None:
        return self.client._server

    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def __enter__(self) -> LspSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self._run(self.client.shutdown_async(None), timeout=10)
            self.client.exit(None)
            # pygls leaves `stop` unannotated
            self._run(asyncio.wait_for(self.client.stop(), 10), timeout=15)  # type: ignore[no-untyped-call]
        except Exception:
            if self.process is not None and self.alive():
                self.process.kill()
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=5)


def ready_session(folders: list[Path], logs: Path, **options: Any) -> Iterator[LspSession]:
    """A session whose index is ready, closed when the generator ends: `yield from` it in a fixture."""
    with LspSession(folders, logs, **options) as session:
        session.wait_ready()
        yield session
