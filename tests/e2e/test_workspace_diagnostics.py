"""`workspace/diagnostic` over LSP with the real `kbls serve`: the link problems of the notes the
editor has not open, from the index, with result ids (a note unchanged since the last pull is
`unchanged`), in a vault whose folder and note names hold spaces and accents
(`tests/support/notes_vault.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types
from tests.e2e.test_link_diagnostics import EXPECTED
from tests.support.corpus import write_config
from tests.support.lsp_client import LspSession
from tests.support.notes_vault import JOURNAL, JOURNAL_TEXT, LINE_OF, write_vault

PULLS = types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities())


def _pull(session: LspSession, previous: dict[str, str]) -> dict[str, Any]:
    params = types.WorkspaceDiagnosticParams(
        previous_result_ids=[types.PreviousResultId(uri=uri, value=value) for uri, value in previous.items()]
    )
    report: Any = session._run(session.client.workspace_diagnostic_async(params))
    return {item.uri: item for item in report.items}


def _problems(report: types.WorkspaceFullDocumentDiagnosticReport, text: str) -> set[tuple[int, str, str]]:
    lines = text.split("\n")
    return {
        (d.range.start.line, str(d.code), lines[d.range.start.line][d.range.start.character : d.range.end.character])
        for d in report.items
    }


def test_closed_notes_problems_come_from_the_index_with_result_ids(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "my vault")
    write_config(vault)
    journal_uri = (vault / JOURNAL).as_uri()
    with LspSession([vault], tmp_path / "logs", text_document=PULLS, diagnostic_refresh=True) as s:
        s.wait_ready()
        provider = s.initialize_result.capabilities.diagnostic_provider
        assert isinstance(provider, types.DiagnosticOptions) and provider.workspace_diagnostics

        first = _pull(s, {})
        journal = first[journal_uri]
        assert isinstance(journal, types.WorkspaceFullDocumentDiagnosticReport) and journal.result_id
        assert _problems(journal, JOURNAL_TEXT) == EXPECTED  # the same as the open note's, `[[#Winter]]` included
        assert all(isinstance(r, types.WorkspaceFullDocumentDiagnosticReport) and r.items for r in first.values())
        ids = {uri: str(r.result_id) for uri, r in first.items()}

        again = _pull(s, ids)
        assert set(again) == set(first)
        assert all(isinstance(r, types.WorkspaceUnchangedDocumentDiagnosticReport) for r in again.values())

        # a note created elsewhere mends a link: once indexed, the journal's report is new
        (vault / "recipes" / "focaccia.md").write_text("# Focaccia\n\nFlat bread.\n", encoding="utf-8")
        s.save(vault / "recipes" / "focaccia.md")

        def renewed() -> types.WorkspaceFullDocumentDiagnosticReport | None:
            report = _pull(s, ids)[journal_uri]
            return report if isinstance(report, types.WorkspaceFullDocumentDiagnosticReport) else None

        mended = s.wait_for(renewed, 60, "a new report of the journal")
        assert mended.result_id != ids[journal_uri]
        assert _problems(mended, JOURNAL_TEXT) == {p for p in EXPECTED if p[0] != LINE_OF["focaccia"]}

        # an open note is the document pull's: the workspace report it had is emptied
        item = types.TextDocumentItem(uri=journal_uri, language_id="markdown", version=1, text=JOURNAL_TEXT)
        s.notify(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=item))
        opened = _pull(s, {journal_uri: str(mended.result_id)})[journal_uri]
        assert isinstance(opened, types.WorkspaceFullDocumentDiagnosticReport) and not opened.items


def test_a_file_appearing_on_disk_renews_the_report_of_a_note_that_links_it(tmp_path: Path) -> None:
    # an image is not indexed: its link is checked on disk, so the index alone cannot say the
    # report is unchanged
    vault = tmp_path / "my vault" / "Über"
    vault.mkdir(parents=True)
    (vault / "a note.md").write_text("# A note\n\nThe plot: ![plot](d%20plot.png)\n", encoding="utf-8")
    write_config(vault)
    uri = (vault / "a note.md").as_uri()
    with LspSession([vault], tmp_path / "logs", text_document=PULLS, diagnostic_refresh=True) as s:
        s.wait_ready()
        first = _pull(s, {})[uri]
        assert isinstance(first, types.WorkspaceFullDocumentDiagnosticReport) and first.items
        (vault / "d plot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
        again = _pull(s, {uri: str(first.result_id)})[uri]
        assert isinstance(again, types.WorkspaceFullDocumentDiagnosticReport), "a changed report said unchanged"
        assert not again.items, again.items
        assert again.result_id != first.result_id
