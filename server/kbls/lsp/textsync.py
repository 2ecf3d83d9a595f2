"""`textDocument/didOpen`, `didChange` and `didClose`: pygls keeps the text of open documents
(`LanguageServerProtocol` updates the workspace before these run); these tell the features that
follow a document's text: diagnostics are published for it, its parsed view (and outline) is
dropped, and the daemon embeds the open notes first.
Registering them also makes the server advertise `openClose` sync. One module owns the three,
as pygls takes one handler per method.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from kbls.lsp import diagnostics, views
from kbls.lsp.uris import client_uri

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer


def register(server: KblsServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)


def did_open(ls: KblsServer, params: types.DidOpenTextDocumentParams) -> None:
    diagnostics.document_opened(ls, params.text_document.uri)
    _tell_daemon(ls, params.text_document.uri, opened=True)


def did_change(ls: KblsServer, params: types.DidChangeTextDocumentParams) -> None:
    diagnostics.document_changed(ls, params.text_document.uri)


def did_close(ls: KblsServer, params: types.DidCloseTextDocumentParams) -> None:
    diagnostics.document_closed(ls, params.text_document.uri)
    views.forget(ls, params.text_document.uri)
    _tell_daemon(ls, params.text_document.uri, opened=False)


def _tell_daemon(ls: KblsServer, uri: str, *, opened: bool) -> None:
    path = client_uri(uri).path
    if path is not None:
        ls.daemon.note_opened(path, opened)
