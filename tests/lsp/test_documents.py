"""Open documents are cut into lines at LSP's line ends only (kbls.lsp.documents)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from kbls.lsp.documents import LspLinesDocument, LspLinesWorkspace, adopt, lsp_lines


def test_only_lf_crlf_and_cr_end_a_line() -> None:
    assert lsp_lines("a\x0cb\u2028c\x85d\nline two\r\nthree\rfour") == (
        "a\x0cb\u2028c\x85d\n", "line two\r\n", "three\r", "four",
    )
    assert lsp_lines("") == () and lsp_lines("\n") == ("\n",) and lsp_lines("x\n") == ("x\n",)


@given(st.text(alphabet=st.sampled_from("ab \n\r\t#")))
def test_without_other_separators_the_lines_are_pythons(text: str) -> None:
    assert lsp_lines(text) == tuple(text.splitlines(True))


def test_an_incremental_edit_lands_on_the_editors_line() -> None:
    workspace = Workspace(None, types.TextDocumentSyncKind.Incremental)
    adopt(workspace)
    assert isinstance(workspace, LspLinesWorkspace)
    item = types.TextDocumentItem(uri="file:///n.md", language_id="markdown", version=1, text="a\x0cb\nline two\n")
    workspace.put_text_document(item)
    document = workspace.get_text_document("file:///n.md")
    assert isinstance(document, LspLinesDocument) and isinstance(document, TextDocument)
    at = types.Position(line=1, character=0)
    document.apply_change(types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text="X"))
    assert document.source == "a\x0cb\nXline two\n"  # pygls's own split put the X after the form feed
