"""Link diagnostics and their quick fixes over LSP, with the real `kbls serve` and model, on a
vault of wiki and markdown links, anchors, aliases, nested folders, names with spaces and
accents and an ambiguous name (`tests/support/notes_vault.py`).

One session is a client that only takes pushed diagnostics; another one pulls them
(`textDocument/diagnostic`) and sets severities through `initializationOptions`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from tests.support.corpus import write_config
from tests.support.lsp_client import LspSession
from tests.support.notes_vault import JOURNAL, JOURNAL_TEXT, LINE_OF, write_vault

EDITS = types.WorkspaceEditClientCapabilities(
    document_changes=True, resource_operations=[types.ResourceOperationKind.Create]
)
#: (line, code, link text) of every problem of the journal note.
EXPECTED = {
    (LINE_OF["plans"], "missing_heading", "[[Café plans#Opening hours]]"),
    (LINE_OF["index"], "ambiguous", "[[index]]"),
    (LINE_OF["sourdough"], "missing_note", "[[Sourdugh bread]]"),
    (LINE_OF["focaccia"], "missing_note", "[[Focaccia]]"),
    (LINE_OF["out"], "outside_root", "[secret](../../outside.md)"),
    (LINE_OF["out"], "missing_note", "[old](../archive/old.md)"),
    (LINE_OF["out"], "missing_heading", "[[#Winter]]"),
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_vault(tmp_path_factory.mktemp("vault") / "my vault")
    write_config(root)
    return root


@pytest.fixture(scope="module")
def pushed(vault: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    with LspSession([vault], tmp_path_factory.mktemp("push-logs"), workspace_edit=EDITS) as s:
        s.wait_ready()
        yield s


def _open(session: LspSession, path: Path, text: str, version: int = 1) -> str:
    item = types.TextDocumentItem(uri=path.as_uri(), language_id="markdown", version=version, text=text)
    session.notify(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=item))
    return path.as_uri()


def _replace(session: LspSession, uri: str, version: int, text: str) -> None:
    params = types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
    )
    session.notify(types.TEXT_DOCUMENT_DID_CHANGE, params)


def _problems(diagnostics: list[dict[str, Any]], text: str) -> set[tuple[int, str, str]]:
    lines = text.split("\n")
    out = set()
    for d in diagnostics:
        start, end = d["range"]["start"], d["range"]["end"]
        assert start["line"] == end["line"]
        out.add((start["line"], d["code"], lines[start["line"]][start["character"] : end["character"]]))
    return out


def _actions(
    session: LspSession, uri: str, line: int, character: int, kind: types.CodeActionKind = types.CodeActionKind.QuickFix
) -> list[types.CodeAction]:
    """The code actions of `kind` at the position (the others the server offers are left out)."""
    at = types.Position(line, character)
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=types.Range(at, at),
        context=types.CodeActionContext(diagnostics=[]),
    )
    result: Any = session._run(session.client.text_document_code_action_async(params))
    return [a for a in result or [] if isinstance(a, types.CodeAction) and a.kind == kind]


def _new_text(action: types.CodeAction) -> str:
    assert action.edit is not None and action.edit.document_changes
    change = action.edit.document_changes[-1]
    assert isinstance(change, types.TextDocumentEdit)
    edit = change.edits[0]
    assert isinstance(edit, types.TextEdit)
    return edit.new_text


def test_diagnostics_are_pushed_for_an_open_note_one_per_broken_link(pushed: LspSession, vault: Path) -> None:
    uri = _open(pushed, vault / JOURNAL, JOURNAL_TEXT)
    found = pushed.wait_for(lambda: pushed.diagnostics(uri), 30, "diagnostics of the journal")
    assert _problems(found, JOURNAL_TEXT) == EXPECTED
    ambiguous = next(d for d in found if d["code"] == "ambiguous")
    assert "areas/index.md" in ambiguous["message"] and "projects/kbls/index.md" in ambiguous["message"]
    assert {r["message"] for r in ambiguous["relatedInformation"]} == {"areas/index.md", "projects/kbls/index.md"}
    assert all(d["severity"] == types.DiagnosticSeverity.Warning and d["source"] == "kbls" for d in found)


def test_an_edit_that_mends_a_link_clears_its_diagnostic_after_the_pause(pushed: LspSession, vault: Path) -> None:
    path = vault / "journal" / "edited.md"
    text = "# Edited\n\nSee [[Pizza dogh]] tonight.\n"
    uri = _open(pushed, path, text)
    first = pushed.wait_for(lambda: pushed.diagnostics(uri), 30, "diagnostics of the new note")
    assert _problems(first, text) == {(2, "missing_note", "[[Pizza dogh]]")}
    mended = text.replace("dogh", "dough")
    _replace(pushed, uri, 2, mended)
    pushed.wait_for(lambda: pushed.diagnostics(uri) == [], 30, "the mended link's diagnostic to go")
    pushed.notify(types.TEXT_DOCUMENT_DID_CLOSE, types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))


def test_did_you_mean_offers_the_note_a_typo_meant_first_and_rewrites_the_link(pushed: LspSession, vault: Path) -> None:
    uri = _open(pushed, vault / JOURNAL, JOURNAL_TEXT)
    line = LINE_OF["sourdough"]
    actions = _actions(pushed, uri, line, JOURNAL_TEXT.split("\n")[line].index("[[Sourdugh") + 3)
    meant = [a for a in actions if a.title.startswith("Did you mean")]
    assert 1 <= len(meant) <= 3
    assert meant[0].title == 'Did you mean "Sourdough bread"? (recipes/sourdough-bread.md)'
    assert _new_text(meant[0]) == "[[Sourdough bread]]"
    assert all(a.kind == types.CodeActionKind.QuickFix for a in actions)


def test_creating_the_missing_note_puts_it_beside_its_kind_with_their_front_matter(
    pushed: LspSession, vault: Path
) -> None:
    uri = _open(pushed, vault / JOURNAL, JOURNAL_TEXT)
    line = LINE_OF["focaccia"]
    actions = _actions(pushed, uri, line, JOURNAL_TEXT.split("\n")[line].index("[[Focaccia") + 3)
    create = next(a for a in actions if a.title.startswith("Create note"))
    assert create.title == 'Create note "Focaccia" (recipes/focaccia.md)'
    assert create.edit is not None and create.edit.document_changes
    made = create.edit.document_changes[0]
    assert isinstance(made, types.CreateFile) and made.uri == (vault / "recipes" / "focaccia.md").as_uri()
    text = _new_text(create)
    assert text.startswith("---\ntype: recipe\ntags: []\ncreated: ") and "\n---\n# Focaccia\n" in text


def test_an_ambiguous_name_is_fixed_by_naming_one_of_its_notes(pushed: LspSession, vault: Path) -> None:
    uri = _open(pushed, vault / JOURNAL, JOURNAL_TEXT)
    line = LINE_OF["index"]
    actions = _actions(pushed, uri, line, JOURNAL_TEXT.split("\n")[line].index("[[index") + 3)
    assert {a.title: _new_text(a) for a in actions} == {
        "Link to areas/index.md": "[[Areas index]]",
        "Link to projects/kbls/index.md": "[[Kbls index]]",
    }


def test_a_missing_heading_is_fixed_by_the_nearest_heading(pushed: LspSession, vault: Path) -> None:
    uri = _open(pushed, vault / JOURNAL, JOURNAL_TEXT)
    line = LINE_OF["plans"]
    character = JOURNAL_TEXT.split("\n")[line].index("#Opening")
    actions = _actions(pushed, uri, line, character)
    assert actions and actions[0].title == 'Link to heading "Budget"'
    assert _new_text(actions[0]) == "[[Café plans#Budget]]"


def test_a_paragraph_naming_notes_in_plain_text_is_offered_their_links(pushed: LspSession, vault: Path) -> None:
    uri = _open(pushed, vault / JOURNAL, JOURNAL_TEXT)
    actions = _actions(pushed, uri, LINE_OF["mention"], 3, types.CodeActionKind.RefactorRewrite)
    named = {a.title: _new_text_of_changes(a) for a in actions if a.title.startswith("Link ")}
    assert named == {
        'Link "pizza dough" to "Pizza dough"': "[[pizza dough]]",
        'Link "Ada Lovelace" to "Ada Lovelace"': "[[Ada Lovelace]]",
    }
    # never the note the paragraph links already
    assert not any("Pancakes" in a.title for a in actions)


def _new_text_of_changes(action: types.CodeAction) -> str:
    assert action.edit is not None and action.edit.changes
    (edits,) = action.edit.changes.values()
    return edits[0].new_text


def test_a_link_that_works_gets_no_action(pushed: LspSession, vault: Path) -> None:
    uri = _open(pushed, vault / JOURNAL, JOURNAL_TEXT)
    line = LINE_OF["spaced"]
    assert _actions(pushed, uri, line, JOURNAL_TEXT.split("\n")[line].index("[budget]") + 2) == []


def test_a_client_that_pulls_gets_the_same_problems_with_its_severities(
    vault: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    pulls = types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities())
    options = {"diagnostics": {"ambiguous": "off", "missingNote": "error", "unlinkedMention": "hint"}}
    with LspSession(
        [vault], tmp_path_factory.mktemp("pull-logs"), text_document=pulls, init_options=options, diagnostic_refresh=True
    ) as s:
        s.wait_ready()
        provider = s.initialize_result.capabilities.diagnostic_provider
        assert isinstance(provider, types.DiagnosticOptions) and provider.inter_file_dependencies
        uri = _open(s, vault / JOURNAL, JOURNAL_TEXT)
        params = types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri))
        report: Any = s._run(s.client.text_document_diagnostic_async(params))
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        found = {
            (d.range.start.line, d.code, d.severity) for d in report.items
        }
        expected = {
            (line, code, types.DiagnosticSeverity.Error if code == "missing_note" else types.DiagnosticSeverity.Warning)
            for line, code, _ in EXPECTED if code != "ambiguous"
        }
        # the optional hint: notes named in plain text (Pancakes is linked there already)
        hint = types.DiagnosticSeverity.Hint
        expected |= {(LINE_OF["mention"], "unlinked_mention", hint)}
        assert found == expected
        hints = sorted(d.message for d in report.items if d.code == "unlinked_mention")
        assert hints == [
            '"Ada Lovelace" names the note "Ada Lovelace": link it?', '"pizza dough" names the note "Pizza dough": link it?'
        ]
        assert s.diagnostics(uri) is None  # nothing pushed to a client that pulls
        # a note saved elsewhere: once indexed, the client is told to pull again
        before = s.refreshes
        (vault / "recipes" / "focaccia.md").write_text("# Focaccia\n\nFlat bread.\n", encoding="utf-8")
        s.save(vault / "recipes" / "focaccia.md")
        s.wait_for(lambda: s.refreshes > before, 60, "workspace/diagnostic/refresh")
        report = s._run(s.client.text_document_diagnostic_async(params))
        assert (LINE_OF["focaccia"], "missing_note") not in {(d.range.start.line, d.code) for d in report.items}
        (vault / "recipes" / "focaccia.md").unlink()
        s.save(vault / "recipes" / "focaccia.md")


def test_a_client_that_pulls_without_refresh_is_pushed_to_and_its_pulls_are_empty(
    vault: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    pulls = types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities())
    with LspSession([vault], tmp_path_factory.mktemp("nvim-logs"), text_document=pulls) as s:
        s.wait_ready()
        uri = _open(s, vault / JOURNAL, JOURNAL_TEXT)
        found = s.wait_for(lambda: s.diagnostics(uri), 30, "pushed diagnostics")
        assert _problems(found, JOURNAL_TEXT) == EXPECTED
        params = types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri))
        report: Any = s._run(s.client.text_document_diagnostic_async(params))
        assert list(report.items) == []
