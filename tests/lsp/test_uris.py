"""A client's URI read once (kbls.lsp.uris): the key pygls keeps the open document under and the
file it names, for the URIs VS Code and Neovim write for the paths users have."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.workspace import Workspace
from tests.support.client_uris import neovim_uri, vscode_uri

from kbls.lsp.documents import adopt
from kbls.lsp.uris import client_uri, file_uri, open_document, open_text

#: names that need escaping: a space, é composed and decomposed, `#`, `%`, `[`, `+`, `;`
NAMES = ["My Notes/a b.md", "Notizen/\u00dcber/Caf\u00e9.md", "Cafe\u0301/the\u0301.md", "issue #12.md",
         "100% done.md", "[draft] plan.md", "c++ tips.md", "a;b=c.md"]


def _workspace() -> Workspace:
    workspace = Workspace(None)
    adopt(workspace)
    return workspace


def _did_open(workspace: Workspace, uri: str) -> None:
    workspace.put_text_document(types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text="# x\n"))


@pytest.mark.parametrize("write", [vscode_uri, neovim_uri], ids=["vscode", "neovim"])
@pytest.mark.parametrize("name", NAMES)
def test_a_document_opened_at_an_escaped_uri_is_found_with_its_file(
    tmp_path: Path, name: str, write: Callable[[Path], str]
) -> None:
    path = tmp_path / "Vault é" / name
    uri = write(path)
    assert "%" in uri
    workspace = _workspace()
    _did_open(workspace, uri)
    opened = open_document(workspace, uri, "test")
    assert opened is not None
    document, found = opened
    assert found == path and document.uri == uri
    # What the server sends back names the same file and the same open document.
    assert client_uri(file_uri(path)).path == path
    assert client_uri(file_uri(path)).key == client_uri(uri).key


def test_windows_uris_as_vs_code_writes_them() -> None:
    read = client_uri("file:///c%3A/Users/Me/My%20Notes/Caf%C3%A9%20%2312%20%5Bdraft%5D.md", windows=True)
    assert read.key == "file:///c:/Users/Me/My Notes/Café #12 [draft].md"
    assert str(read.path) == r"c:\Users\Me\My Notes\Café #12 [draft].md"
    # Neovim keeps the drive's case and colon; the path is the same file.
    assert str(client_uri("file:///C:/Users/Me/My%20Notes/a.md", windows=True).path) == r"c:\Users\Me\My Notes\a.md"
    assert str(client_uri("file://server/share/My%20Notes/a.md", windows=True).path) == r"\\server\share\My Notes\a.md"
    workspace = _workspace()
    _did_open(workspace, "file:///c%3A/Users/Me/a%20b.md")
    assert workspace.text_documents.get(client_uri("file:///c%3A/Users/Me/a%20b.md").key) is not None


def test_uris_that_name_no_local_file() -> None:
    assert client_uri("untitled:Untitled-1").path is None
    assert client_uri("vscode-notebook-cell:/x.ipynb#W0sZmlsZQ%3D%3D").path is None
    assert client_uri("file://server/share/a.md").path is None  # a share on another machine
    assert client_uri("file:relative/a.md").path is None
    assert client_uri("file://localhost/notes/a%20b.md").path == Path("/notes/a b.md")
    assert client_uri("FILE:///notes/a.md").path == Path("/notes/a.md")


def test_a_document_not_open_is_said_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    workspace = _workspace()
    _did_open(workspace, "untitled:Untitled-1")
    with caplog.at_level(logging.INFO, logger="kbls.lsp.uris"):
        assert open_document(workspace, "file:///notes/My%20Notes/a.md", "textDocument/definition") is None
        assert open_document(workspace, "untitled:Untitled-1", "textDocument/completion") is None
        # A feature that needs no file (an outline) has the untitled document; one not open is logged.
        assert open_text(workspace, "untitled:Untitled-1", "textDocument/documentSymbol") is not None
        assert open_text(workspace, "untitled:Untitled-2", "textDocument/foldingRange") is None
    first, second, third = caplog.records
    assert first.levelno == logging.WARNING
    assert "textDocument/definition" in first.getMessage() and "file:///notes/My Notes/a.md" in first.getMessage()
    assert "textDocument/completion" in second.getMessage() and "not a local file" in second.getMessage()
    assert third.levelno == logging.WARNING and "textDocument/foldingRange" in third.getMessage()
