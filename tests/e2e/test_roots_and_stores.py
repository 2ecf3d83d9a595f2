"""Roots that overlap or are reached through symlinks, and a store rebuilt under a running daemon."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.support.corpus import make_workspace, write
from tests.support.lsp_client import LspSession
from tests.support.processes import child_env, run_kbls


def test_nested_roots_answer_each_note_once(tmp_path: Path) -> None:
    notes = make_workspace(tmp_path)
    inner = notes / "rust"  # a folder and its sub-folder both open
    session = LspSession([notes, inner], tmp_path)
    try:
        session.wait_ready()
        assert len(session.status().roots) == 2
        for extra in ({"mode": "lexical"}, {"mode": "hybrid"}, {"mode": "lexical", "groupByFile": True}):
            hits = session.search("ownership borrowing reference move", limit=50, **extra).hits
            files = Counter((h.uri, h.range.start.line) for h in hits)
            assert hits and max(files.values()) == 1, files
            rust = [h for h in hits if "/rust/" in h.uri]
            assert rust, hits
            # The innermost root answers for its notes, with paths relative to it.
            assert all(h.root == inner.as_uri() and "/" not in h.path for h in rust), rust
        # The outer root still answers for the rest, and a small limit is still filled.
        assert "cooking/sourdough.md" in session.paths_found("sourdough starter", mode="lexical")
        assert len(session.search("the", mode="lexical", limit=3).hits) == 3
    finally:
        session.close()


def test_a_rebuild_by_the_cli_is_noticed_and_saves_land_in_the_new_store(tmp_path: Path) -> None:
    notes = make_workspace(tmp_path)
    session = LspSession([notes], tmp_path)
    try:
        session.wait_ready()
        rebuilt = run_kbls(["index", "--rebuild", "--root", str(notes)], tmp_path, env=child_env(tmp_path))
        assert rebuilt.returncode == 0, rebuilt.stderr
        note = write(notes, "cooking/focaccia.md", "# Focaccia\n\nDimple the dough with olive oil and rosemary.\n")
        session.save(note)
        session.wait_for(
            lambda: "cooking/focaccia.md" in session.paths_found("focaccia rosemary dimple", mode="lexical"),
            timeout=60, what="the saved note to be found",
        )
        session.wait_ready()
        # What the daemon wrote is in the store file on disk (not in the file the rebuild unlinked).
        found = run_kbls(["search", "focaccia rosemary dimple", "--root", str(notes), "--mode", "lexical"], tmp_path)
        assert found.returncode == 0 and "cooking/focaccia.md" in found.stdout, found.stdout + found.stderr
        assert any("replaced" in m for m in session.shown()), session.shown()
        assert session.status().roots[0].files == 8
    finally:
        session.close()


def test_related_and_hover_through_a_symlinked_folder(tmp_path: Path) -> None:
    notes = make_workspace(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = elsewhere / "kb"
    link.symlink_to(notes, target_is_directory=True)  # the editor opened the note through the link
    session = LspSession([notes], tmp_path)
    try:
        session.wait_ready()
        uri = (link / "rust" / "borrowing.md").as_uri()
        related = session.request("kb/related", {"uri": uri})
        assert [h["path"] for h in related["hits"]], related
        assert "rust/borrowing.md" not in [h["path"] for h in related["hits"]]
        hover = session.raw_request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
        )
        assert hover is not None and "Related notes" in hover["contents"]["value"]
    finally:
        session.close()
