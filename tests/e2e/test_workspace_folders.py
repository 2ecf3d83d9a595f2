"""Multi-root: every folder has its own store; folders come and go at run time."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from tests.support.corpus import make_workspace, store_of, write_config
from tests.support.lsp_client import LspSession

GARDEN = "# Tomatoes\n\nPinch out the side shoots of cordon tomato plants every week in summer.\n"


def _garden(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    (root / "veg").mkdir(parents=True)
    (root / "veg" / "tomatoes.md").write_text(GARDEN, encoding="utf-8")
    write_config(root)
    return root


def test_every_folder_is_searched_and_hits_merged(tmp_path: Path) -> None:
    notes, garden = make_workspace(tmp_path), _garden(tmp_path, "garden")
    session = LspSession([notes, garden], tmp_path)
    try:
        status = session.wait_ready()
        assert [r.uri for r in status.roots] == [notes.as_uri(), garden.as_uri()]
        assert [Path(r.store) for r in status.roots] == [store_of(notes), store_of(garden)]  # one store each
        hits = session.search("tomato side shoots", limit=20).hits
        assert hits[0].root == garden.as_uri() and hits[0].path == "veg/tomatoes.md"
        # A query each folder has an answer to (an unrelated folder answers nothing since the
        # relevance floor of issue 10): hits of both, merged by score.
        hits = session.search("tomato plants and sourdough bread", limit=20).hits
        assert {h.root for h in hits} == {notes.as_uri(), garden.as_uri()}
        expected = {(garden.as_uri(), "veg/tomatoes.md"), (notes.as_uri(), "cooking/sourdough.md")}
        assert {(h.root, h.path) for h in hits} >= expected
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
    finally:
        session.close()


def test_folders_added_and_removed_at_run_time(tmp_path: Path) -> None:
    notes, garden = make_workspace(tmp_path), _garden(tmp_path, "garden")
    session = LspSession([notes], tmp_path)
    try:
        session.wait_ready()
        assert "veg/tomatoes.md" not in session.paths_found("cordon tomato plants", mode="lexical")
        added = types.WorkspaceFoldersChangeEvent(
            added=[types.WorkspaceFolder(uri=garden.as_uri(), name="garden")], removed=[]
        )
        session.notify(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, types.DidChangeWorkspaceFoldersParams(event=added))
        session.wait_for(
            lambda: "veg/tomatoes.md" in session.paths_found("cordon tomato plants", mode="lexical"),
            timeout=30, what="the added folder to be searched",
        )
        removed = types.WorkspaceFoldersChangeEvent(
            added=[], removed=[types.WorkspaceFolder(uri=notes.as_uri(), name="notes")]
        )
        session.notify(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, types.DidChangeWorkspaceFoldersParams(event=removed))
        session.wait_for(lambda: len(session.status().roots) == 1, timeout=30, what="the folder to be removed")
        assert session.paths_found("sourdough starter", mode="lexical") == []
        assert session.status().roots[0].uri == garden.as_uri()
    finally:
        session.close()
