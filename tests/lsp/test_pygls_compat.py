"""The pygls private names kbls relies on (`kbls.lsp.pygls_compat`): one contract test each, and
a check that no other module names a `_private` pygls attribute.

When a pygls release changes one of these, its test fails here, in one place, instead of a
handler failing in an editor. pygls is pinned to its minor version (pyproject.toml).
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import re
import threading
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol
from pygls.server import JsonRPCServer
from pygls.workspace import TextDocument, Workspace

from kbls.lsp import documents, pygls_compat
from kbls.lsp.server import KblsProtocol

SOURCE = Path(pygls_compat.__file__).resolve().parents[1]
PYGLS_CLASSES: tuple[type, ...] = (
    JsonRPCProtocol, LanguageServerProtocol, JsonRPCServer, LanguageServer, Workspace, TextDocument,
)


class Capture:
    """A pygls writer that keeps what is written."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        bodies = re.split(rb"Content-Length: \d+\r\n(?:Content-Type: [^\r]*\r\n)?\r\n", self.data)
        return [json.loads(body) for body in bodies if body.strip()]


def _server(protocol: type[LanguageServerProtocol] = LanguageServerProtocol) -> tuple[LanguageServer, Capture]:
    server = LanguageServer("contract", "0", protocol_cls=protocol)
    out = Capture()
    server.protocol.set_writer(out)  # type: ignore[arg-type]
    initialize = types.InitializeParams(capabilities=types.ClientCapabilities())
    server.protocol.handle_message(types.InitializeRequest(id="init", params=initialize))
    out.data = b""  # the initialize answer
    return server, out


def test_send_data_writes_the_message_as_it_is() -> None:
    server, out = _server()
    pygls_compat.send_data(server.protocol, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}})
    assert out.messages() == [{"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}}]


def test_send_error_answers_the_request() -> None:
    server, out = _server()
    pygls_compat.send_error(server.protocol, 7, JsonRpcInvalidParams("bad").to_response_error())
    [message] = out.messages()
    assert message["id"] == 7 and message["error"]["code"] == -32602 and "result" not in message


def test_report_server_error_reaches_the_servers_hook() -> None:
    seen: list[tuple[Exception, Any]] = []

    class Recording(LanguageServer):
        def report_server_error(self, error: Exception, source: Any) -> None:
            seen.append((error, source))

    server = Recording("contract", "0")
    error = RuntimeError("boom")
    pygls_compat.report_server_error(server, error, JsonRpcInvalidParams)
    assert seen == [(error, JsonRpcInvalidParams)]


def test_the_stop_event_and_tcp_server_are_what_shutdown_stops() -> None:
    server, _ = _server()
    stop = pygls_compat.install_stop_event(server)
    closed: list[bool] = []

    class Listener:
        def close(self) -> None:
            closed.append(True)

    pygls_compat.keep_tcp_server(server, Listener())
    assert isinstance(stop, threading.Event) and not stop.is_set()
    server.shutdown()  # type: ignore[no-untyped-call]
    assert stop.is_set() and closed == [True]


def test_the_workspace_builds_its_documents_through_the_factory() -> None:
    server, _ = _server()
    workspace = server.workspace
    documents.adopt(workspace)
    item = types.TextDocumentItem(uri="file:///kb/a.md", language_id="markdown", version=3, text="a\x0cb\nc")
    workspace.put_text_document(item)
    document = workspace.get_text_document("file:///kb/a.md")
    assert isinstance(document, documents.LspLinesDocument)
    assert document.version == 3 and document.lines == ("a\x0cb\n", "c")  # LSP's line ends only
    assert document.position_codec is workspace.position_codec


def _notify_many(protocol_cls: type[LanguageServerProtocol], count: int) -> int:
    """`count` didOpen/didChange notifications handled by a server with pygls's own sync handlers
    (generators) plus an async one of ours; the futures pygls still holds afterwards."""
    server, _ = _server(protocol_cls)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def changed(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        return None

    async def main() -> int:
        uri = "file:///kb/a.md"
        opened = types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "markdown", 1, "x"))
        server.protocol.handle_message(types.DidOpenTextDocumentNotification(params=opened))
        for version in range(2, count + 2):
            change = types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [types.TextDocumentContentChangeWholeDocument(text=f"x{version}")],
            )
            server.protocol.handle_message(types.DidChangeTextDocumentNotification(params=change))
        for _ in range(20):
            await asyncio.sleep(0)
        assert server.workspace.get_text_document(uri).source == f"x{count + 1}"
        return len(server.protocol._request_futures)

    return asyncio.run(main())


def test_notification_futures_are_forgotten_once_done() -> None:
    """pygls keeps one future per keystroke until the connection closes (the leak this works around)."""
    assert _notify_many(LanguageServerProtocol, 50) >= 50  # the upstream behaviour the mixin fixes
    assert _notify_many(KblsProtocol, 50) == 0


def _privates(cls: type) -> set[str]:
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("pygls"):
            names |= {n for n in vars(klass) if n.startswith("_") and not n.startswith("__")}
            names |= set(re.findall(r"self\.(_[a-z]\w*)", inspect.getsource(klass)))
    return names


def test_no_module_but_the_compat_one_names_a_private_pygls_attribute() -> None:
    every = set().union(*(_privates(cls) for cls in PYGLS_CLASSES))
    by_class = {cls.__name__: _privates(cls) for cls in PYGLS_CLASSES}
    by_class["KblsProtocol"] = by_class["LanguageServerProtocol"]
    by_class["KblsServer"] = by_class["LanguageServer"]
    found: list[str] = []
    for path in sorted(SOURCE.rglob("*.py")):
        if path.name == "pygls_compat.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            # `server._stop_event`, `protocol._send_data`, `super()._send_response`: never outside the compat module
            if isinstance(node, ast.Attribute) and node.attr in every:
                owner = node.value
                if not (isinstance(owner, ast.Name) and owner.id == "self"):
                    found.append(f"{path.relative_to(SOURCE)}:{node.lineno} {ast.unparse(node)}")
            # a class deriving from a pygls class may not touch (or override) that class's privates on self
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases}
                privates = set().union(*(by_class.get(base, set()) for base in bases))
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Attribute) and inner.attr in privates and ast.unparse(inner.value) == "self":
                        found.append(f"{path.relative_to(SOURCE)}:{inner.lineno} {ast.unparse(inner)}")
                    if isinstance(inner, ast.FunctionDef) and inner.name in privates:
                        found.append(f"{path.relative_to(SOURCE)}:{inner.lineno} def {inner.name}")
    assert found == []
