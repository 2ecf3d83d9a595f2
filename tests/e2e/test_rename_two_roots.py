"""`workspace/willRenameFiles` in a workspace of two roots, with the real `kbls serve`: notes
moved in both at once get each root's link edits in the one answer (it kept the first root's
only), each edit inside its own root. Root folders named with a space, an accent, `#` and `%`."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from tests.support.backlink_vault import CAFE, HUB, NOTES, write_vault
from tests.support.corpus import write_config
from tests.support.lsp_client import LspSession


def test_moves_in_two_roots_get_both_roots_edits(tmp_path: Path) -> None:
    roots = [write_vault(tmp_path / "root a é"), write_vault(tmp_path / "root #b 100%")]
    for root in roots:
        write_config(root)
    with LspSession(
        roots, tmp_path / "logs", workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
        file_operations=types.FileOperationClientCapabilities(will_rename=True),
    ) as s:
        s.wait_ready()
        moves = [types.FileRename((root / CAFE).as_uri(), (root / "Archive" / "Café v2.md").as_uri()) for root in roots]
        edit: Any = s._run(s.client.workspace_will_rename_files_async(types.RenameFilesParams(moves)))
    assert edit is not None and edit.document_changes is not None
    edited: dict[tuple[Path, str], list[types.TextEdit]] = {}
    for change in edit.document_changes:
        assert isinstance(change, types.TextDocumentEdit)
        path = Path(unquote(change.text_document.uri[len("file://") :]))
        root = next(r for r in roots if path.is_relative_to(r))  # never an edit outside a root
        edited[(root, path.relative_to(root).as_posix())] = [e for e in change.edits if isinstance(e, types.TextEdit)]
    for root in roots:
        hub = edited[(root, HUB)]
        assert any(e.new_text.startswith("Archive/Caf%C3%A9%20v2.md") for e in hub), hub
    assert {rel for _, rel in edited} <= set(NOTES)


def test_a_note_linking_here_saved_elsewhere_refreshes_the_lenses(tmp_path: Path) -> None:
    root = write_vault(tmp_path / "lens vault é")
    write_config(root)
    with LspSession([root], tmp_path / "logs", lens_refresh=True) as s:
        s.wait_ready()
        uri = (root / CAFE).as_uri()
        item = types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=NOTES[CAFE])
        s.notify(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=item))
        params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri))
        lenses: Any = s._run(s.client.text_document_code_lens_async(params))
        assert lenses[0].command.title.startswith("2 backlinks · ")
        before = s.lens_refreshes
        (root / "new [one] 50%.md").write_text("# New\n\nAbout [[Café Crème]].\n", encoding="utf-8")
        s.save(root / "new [one] 50%.md")
        s.wait_for(lambda: s.lens_refreshes > before or None, 60, "workspace/codeLens/refresh")
        lenses = s._run(s.client.text_document_code_lens_async(params))
        assert lenses[0].command.title.startswith("3 backlinks · ")
