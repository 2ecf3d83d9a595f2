"""Rename, references and file moves at the engine, with the real store, parser and model: the
cases a reviewer found wrong (front matter read as a heading, a `# comment` in a fence read as a
heading, a moved note's own anchors, names that would break a wiki link, tags whose lowercase is
longer than their written form).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.support.corpus import write

from kbls.editing import checks, linkfixes
from kbls.engine import Engine
from kbls.indexing.embed import Embedder
from kbls.links.suggest import LinkQuery, LinkSuggestion
from kbls.links.syntax import links_in
from kbls.links.view import NoteView
from kbls.retrieval.backlinks import Target
from kbls.retrieval.rename import RenamePlan


@pytest.fixture
def vault(tmp_path: Path, embedder: Embedder) -> Iterator[Callable[[dict[str, str]], tuple[Engine, Path]]]:
    engines: list[Engine] = []

    def build(notes: dict[str, str]) -> tuple[Engine, Path]:
        root = tmp_path / f"my notes é {len(engines)}"
        for rel, text in notes.items():
            write(root, rel, text)
        engine = Engine(root, store_dir=tmp_path / f"store-{len(engines)}", embedder=embedder)
        engine.index()
        engines.append(engine)
        return engine, root

    yield build
    for engine in engines:
        engine.close()


def _lines(root: Path, rel: str) -> list[str]:
    return (root / rel).read_text(encoding="utf-8").split("\n")


def _applied(plan: RenamePlan) -> dict[str, list[str]]:
    """Each edited note's lines with its edits applied (edits of a line right to left)."""
    out: dict[str, list[str]] = {}
    for note in plan.notes:
        rows = list(note.lines)
        for edit in sorted(note.edits, key=lambda e: (e.line, e.start), reverse=True):
            joined = rows[edit.line][: edit.start] + edit.text + rows[edit.last_line][edit.end :]
            rows[edit.line : edit.last_line + 1] = joined.split("\n")
        out[note.path] = rows
    return out


def test_rename_on_front_matter_title_renames_the_title(vault: Callable[..., tuple[Engine, Path]]) -> None:
    engine, root = vault({"old.md": "---\ntitle: Old Note\n---\n\nBody text\n", "b.md": "# B\n\nsee [[Old Note]]\n"})
    lines = _lines(root, "old.md")
    target = engine.renames.prepare("old.md", NoteView(lines), 1, 9)
    assert (target.kind, target.placeholder) == ("title", "Old Note")
    edited = _applied(engine.renames.rename("old.md", NoteView(lines), 1, 9, "New Note", {}))
    assert edited["old.md"][1] == "title: New Note"
    assert edited["b.md"][2] == "see [[New Note]]"


def test_last_front_matter_key_is_no_setext_heading(vault: Callable[..., tuple[Engine, Path]]) -> None:
    engine, root = vault({"old.md": "---\ntitle: Old\ndate: 2024-01-01\n---\n\nBody text\n"})
    lines = _lines(root, "old.md")
    assert engine.graph.target_at("old.md", NoteView(lines), 2, 2) == Target("old.md")
    with pytest.raises(Exception, match="title"):
        engine.renames.prepare("old.md", NoteView(lines), 2, 2)


def test_comment_in_a_code_fence_is_no_heading(vault: Callable[..., tuple[Engine, Path]]) -> None:
    text = "# Old\n\n```bash\n# install deps\nnpm ci\n```\n\n## Setup\n"
    engine, root = vault({"old.md": text, "b.md": "# B\n[[Old#install deps]]\n"})
    lines = _lines(root, "old.md")
    assert engine.graph.target_at("old.md", NoteView(lines), 3, 4) == Target("old.md")
    assert engine.graph.target_at("old.md", NoteView(lines), 7, 4) == Target("old.md", heading_line=7)
    with pytest.raises(Exception, match="title"):
        engine.renames.prepare("old.md", NoteView(lines), 3, 4)


def test_move_leaves_a_notes_own_anchor_links_alone(vault: Callable[..., tuple[Engine, Path]]) -> None:
    engine, root = vault({
        "notes/old.md": "# Old\n\n## First part\n\nSee [below](#first-part) and [other](../other.md).\n",
        "other.md": "# Other\n\n[o](notes/old.md)\n",
    })
    own = _lines(root, "notes/old.md")
    edited = _applied(engine.renames.moves([("notes/old.md", "archive/old.md")], {}))
    assert edited.get("notes/old.md", own)[4] == "See [below](#first-part) and [other](../other.md)."
    assert edited["other.md"][2] == "[o](archive/old.md)"
    edited = _applied(engine.renames.moves([("notes", "Notes 2026")], {}))
    assert edited.get("notes/old.md", own)[4] == own[4]
    assert edited["other.md"][2] == "[o](Notes%202026/old.md)"


def test_an_open_note_reached_through_a_symlink_out_of_the_root_is_not_edited(
    vault: Callable[..., tuple[Engine, Path]],
) -> None:
    engine, root = vault({"old.md": "# Old Title\n", "b.md": "# B\n[[Old Title]]\n"})
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("# X\n[[Old Title]]\n", encoding="utf-8")
    (root / "out").symlink_to(outside)
    opened = engine.open_notes({
        root / "out" / "x.md": NoteView(["# X", "[[Old Title]]"]), root / "b.md": NoteView(["# B", "[[Old Title]]"]),
    })
    assert list(opened) == ["b.md"]
    plan = engine.renames.rename("old.md", NoteView(["# Old Title"]), 0, 3, "New Title", opened)
    assert sorted(n.path for n in plan.notes) == ["b.md", "old.md"]
    assert [b.reference.path for b in engine.graph.backlinks("old.md", opened)] == ["b.md"]


@pytest.mark.parametrize(("new_name", "anchor"), [("Pros | Cons", "pros--cons"), ("Array [T]", "array-t")])
def test_a_heading_renamed_to_a_name_a_wiki_anchor_cannot_hold_is_linked_by_slug(
    vault: Callable[..., tuple[Engine, Path]], new_name: str, anchor: str,
) -> None:
    engine, root = vault({
        "old.md": "# Old\n\n## First part\n\ntext\n",
        "b.md": "# B\n\n[[old#First part]] [[Old#first-part]] [x](old.md#first-part)\n",
    })
    edited = _applied(engine.renames.rename("old.md", NoteView(_lines(root, "old.md")), 2, 4, new_name, {}))
    assert edited["old.md"][2] == f"## {new_name}"
    assert edited["b.md"][2] == f"[[old#{anchor}]] [[Old#{anchor}]] [x](old.md#{anchor})"


def test_a_setext_heading_over_several_lines_is_renamed_whole(vault: Callable[..., tuple[Engine, Path]]) -> None:
    engine, root = vault({
        "old.md": "# Old\n\nThe first\n  part of it\n---\n\ntext\n",
        "b.md": "# B\n\n[[old#The first part of it]] [x](old.md#the-first-part-of-it)\n",
    })
    lines = _lines(root, "old.md")
    target = engine.renames.prepare("old.md", NoteView(lines), 2, 3)
    assert (target.placeholder, target.span.start, target.span.end) == ("The first part of it", 0, 9)
    edited = _applied(engine.renames.rename("old.md", NoteView(lines), 2, 3, "Second part", {}))
    assert edited["old.md"] == ["# Old", "", "Second part", "---", "", "text", ""]
    assert edited["b.md"][2] == "[[old#Second part]] [x](old.md#second-part)"


def test_a_move_to_a_name_a_wiki_link_cannot_hold_links_by_title(vault: Callable[..., tuple[Engine, Path]]) -> None:
    engine, _ = vault({"old.md": "# Old Title\n", "b.md": "# B\n\n[[old#First part]] and [[Old Title]] and [o](old.md)\n"})
    edited = _applied(engine.renames.moves([("old.md", "sub dir/Old #1 [x].md")], {}))
    assert edited["b.md"][2] == "[[Old Title#First part]] and [[Old Title]] and [o](sub%20dir/Old%20%231%20%5Bx%5D.md)"


def test_a_tag_whose_lowercase_is_longer_is_renamed_as_written(vault: Callable[..., tuple[Engine, Path]]) -> None:
    engine, root = vault({"old.md": "# Old\n\ntext #İstanbul #proj/sub\n", "b.md": "# B\n\n#proj here\n"})
    lines = _lines(root, "old.md")
    edited = _applied(engine.renames.rename("old.md", NoteView(lines), 2, 7, "city", {}))
    assert edited["old.md"][2] == "text #city #proj/sub"
    edited = _applied(engine.renames.rename("b.md", NoteView(_lines(root, "b.md")), 2, 2, "work", {}))
    assert (edited["old.md"][2], edited["b.md"][2]) == ("text #İstanbul #work/sub", "#work here")


def test_did_you_mean_is_scored_once_per_link_until_the_notes_change(
    vault: Callable[..., tuple[Engine, Path]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine, root = vault({
        "sourdough bread.md": "# Sourdough bread\n\nFlour, water, salt.\n",
        "j.md": "# J\n\nBaked [[sourdogh bread]] today.\n",
    })
    lines = _lines(root, "j.md")
    ref = links_in(lines)[0]
    asked: list[str] = []  # the did-you-mean searches by meaning (the new note's folder vote asks its own)
    suggest = engine.links.suggest

    def counted(source: str, query: LinkQuery) -> list[LinkSuggestion]:
        if query.limit == linkfixes.CANDIDATES:
            asked.append(query.context)
        return suggest(source, query)

    monkeypatch.setattr(engine.links, "suggest", counted)
    first = checks.fixes(engine.links, "j.md", ref, lines, dt.date(2026, 12, 1))
    again = checks.fixes(engine.links, "j.md", ref, lines, dt.date(2026, 12, 1))
    assert [r.path for r in first.rewrites][:1] == ["sourdough bread.md"] and again.rewrites == first.rewrites
    assert len(asked) == 1
    write(root, "sourdough bread 2.md", "# Sourdough bread 2\n")
    engine.index()
    later = checks.fixes(engine.links, "j.md", ref, lines, dt.date(2026, 12, 1))
    assert len(asked) == 2 and "sourdough bread 2.md" in [r.path for r in later.rewrites]


def test_a_note_grown_past_max_file_bytes_is_not_read_to_be_edited(tmp_path: Path, embedder: Embedder) -> None:
    root = tmp_path / "big notes %"
    write(root, "old.md", "# Old Title\n")
    write(root, "b [1].md", "# B\n\nSee [[Old Title]].\n")
    write(root, ".kbls.yaml", "max_file_bytes: 400\n")
    engine = Engine(root, store_dir=tmp_path / "store", embedder=embedder)
    try:
        engine.index()
        assert [n.path for n in engine.renames.rename_title("old.md", "New", {}).notes] == ["b [1].md", "old.md"]
        # grown past the root's limit since it was indexed (the index still has its link): the
        # indexer would skip it, so a rename does not read it either
        with (root / "b [1].md").open("a", encoding="utf-8") as grown:
            grown.write("words " * 100)
        assert [n.path for n in engine.renames.rename_title("old.md", "New", {}).notes] == ["old.md"]
    finally:
        engine.close()
