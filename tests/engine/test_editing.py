"""The note-editing engine without a daemon: the outline of a note, the tag being typed, how a
broken link is rewritten and how a new note is named and shaped, and the names a paragraph
mentions. The LSP behaviour over the real daemon is in tests/e2e (test_link_diagnostics,
test_outline, test_tag_completion)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kbls.editing import newnote
from kbls.editing.linkcheck import Problem, check_links
from kbls.editing.linkfixes import rewrite
from kbls.editing.mentions import name_mentions, note_name_mentions, paragraph_at
from kbls.editing.outline import FoldKind, outline, symbols
from kbls.editing.tagsyntax import tag_typing
from kbls.engine import Engine
from kbls.links.headings import heading_line
from kbls.links.names import Catalogue, LinkStyle, WikiForm
from kbls.links.resolve import LinkResolver
from kbls.links.syntax import links_in
from kbls.links.view import NoteView
from kbls.storage.records import NoteName

CATALOGUE = Catalogue.of([
    NoteName(1, "recipes/sourdough-bread.md", "Sourdough bread", ()),
    NoteName(2, "people/Ada Lovelace.md", "Ada Lovelace", ("Countess of Lovelace",)),
    NoteName(3, "areas/index.md", "Areas index", ()),
    NoteName(4, "projects/kbls/index.md", "Kbls index", ()),
])


def test_a_hash_line_in_a_fence_is_no_heading_and_sections_nest() -> None:
    lines = ["# Top", "", "```", "# not a heading", "```", "## Child", "text", "", "# Next"]
    found = outline(lines)
    assert [(h.text, h.line, h.section_end, [c.text for c in h.children]) for h in found.headings] == [
        ("Top", 0, 6, ["Child"]), ("Next", 8, 8, []),
    ]
    assert (2, 4, FoldKind.CODE) in [(f.start, f.end, f.kind) for f in found.folds]


def test_front_matter_keys_are_its_top_level_ones_only() -> None:
    found = outline(["---", "title: X", "tags:", "  - a", "# comment", "---", "body"])
    assert found.front_matter is not None and found.front_matter.keys == (("title", 1), ("tags", 2))


def test_the_outline_reads_headings_as_every_link_feature_does_setext_fence_and_front_matter() -> None:
    lines = [
        "---", "title: X", "# not a heading", "---",  # front matter: its `#` line is no heading
        "Setext *top*", "===",
        "```", "# in a fence", "Not setext", "---", "```",
        "Second", "------", "text", "",
        "## **Third**", "more",
    ]
    view = NoteView(lines)
    found = symbols(view.lines, view.headings)
    assert symbols(lines) == found
    assert [(h.level, h.text, h.line, h.last, h.section_end, [c.text for c in h.children]) for h in found.headings] == [
        (1, "Setext top", 4, 5, 16, ["Second", "Third"]),
    ]
    assert [(c.text, c.level, c.line, c.last, c.section_end) for c in found.headings[0].children] == [
        ("Second", 2, 11, 12, 13), ("Third", 2, 15, 15, 16),
    ]
    assert found.front_matter is not None
    assert (found.front_matter.start, found.front_matter.end, found.front_matter.keys) == (0, 3, (("title", 1),))
    folds = [(f.start, f.end, f.kind) for f in outline(lines, found).folds]
    assert (0, 3, FoldKind.FRONT_MATTER) in folds and (6, 10, FoldKind.CODE) in folds
    assert (4, 16, FoldKind.SECTION) in folds and outline(lines).folds == outline(lines, found).folds


@pytest.mark.parametrize(("lines", "at", "typed"), [
    (["x #ba"], (0, 5), "ba"),
    (["x #par/ch"], (0, 9), "par/ch"),
    (["---", "tags: [a, ba", "---"], (1, 12), "ba"),
    (["---", "tags:", "  - ba", "---"], (2, 6), "ba"),
])
def test_the_tag_being_typed(lines: list[str], at: tuple[int, int], typed: str) -> None:
    found = tag_typing(lines, *at)
    assert found is not None and found.typed == typed


@pytest.mark.parametrize(("lines", "at"), [
    (["#"], (0, 1)), (["```", "#ba"], (1, 3)), (["see `#ba"], (0, 8)), (["[[x#he"], (0, 6)),
    (["---", "title: ba", "---"], (1, 9)), (["a#b"], (0, 3)),
])
def test_no_tag_at_a_heading_in_code_a_link_heading_or_other_front_matter(lines: list[str], at: tuple[int, int]) -> None:
    assert tag_typing(lines, *at) is None


def test_a_rewritten_wiki_link_keeps_its_heading_and_the_label_a_person_wrote() -> None:
    note = CATALOGUE.by_path["recipes/sourdough-bread.md"]
    lines = ["Bake [[Sourdugh#Proof|the bread]] now", "and [[Sourdugh]]"]
    first, second = links_in(lines)
    style = LinkStyle(WikiForm.TITLE)
    assert rewrite(CATALOGUE, style, "j.md", first, lines, note) == "[[Sourdough bread#Proof|the bread]]"
    assert rewrite(CATALOGUE, style, "j.md", second, lines, note) == "[[Sourdough bread]]"
    assert rewrite(CATALOGUE, LinkStyle(WikiForm.PATH, labelled=True), "j.md", second, lines, note) == (
        "[[recipes/sourdough-bread|Sourdough bread]]"
    )


def test_a_rewritten_markdown_link_keeps_its_label_anchor_and_angle_brackets() -> None:
    note = CATALOGUE.by_path["people/Ada Lovelace.md"]
    lines = ["See [her](<../people/Ada Lovlace.md#early-life>) and [her](x.md)"]
    angled, bare = links_in(lines)
    style = LinkStyle()
    assert rewrite(CATALOGUE, style, "j/x.md", angled, lines, note) == "[her](<../people/Ada Lovelace.md#early-life>)"
    assert rewrite(CATALOGUE, style, "j/x.md", bare, lines, note) == "[her](../people/Ada%20Lovelace.md)"


def test_a_new_note_is_named_and_shaped_like_most_of_its_siblings() -> None:
    kebab = newnote._Sibling("pizza-dough", (("type", "recipe"), ("tags", "[x]"), ("created", "2024-01-01")), True, True)
    other = newnote._Sibling("pancakes", (("type", "recipe"), ("author", "me")), True, False)
    assert newnote._file_name("Focaccia al rosmarino", [kebab, other]) == "focaccia-al-rosmarino"
    plain = newnote._Sibling("Grocery list", (), False, True)
    assert newnote._file_name("Focaccia: al/rosmarino?", [plain]) == "Focaccia al rosmarino"
    text = newnote._text("Focaccia", [kebab, kebab, other], dt.date(2026, 12, 1))
    assert text == "---\ntype: recipe\ntags: []\ncreated: 2026-12-01\n---\n# Focaccia\n\n"
    assert newnote._text("Focaccia", [], dt.date(2026, 12, 1)) == "# Focaccia\n\n"


def test_no_new_note_through_a_symlinked_folder_out_of_the_root(tmp_path: Path) -> None:
    root = tmp_path / "my notes é"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    (root / "a.md").write_text("# A\n", encoding="utf-8")
    (root / "out").symlink_to(tmp_path / "outside")
    catalogue = Catalogue.of([NoteName(1, "a.md", "A", ())])
    resolver = LinkResolver(root)
    lines = ["See [new](out/new.md), [[out/other]] and [here](sub/new%20one.md)."]
    made = [
        newnote.new_note(None, catalogue, resolver, "a.md", ref, "New", "", lines, dt.date(2026, 12, 1))  # type: ignore[arg-type]
        for ref in links_in(lines)
    ]
    assert [m.path if m else None for m in made] == [None, None, "sub/new one.md"]


def test_a_paragraph_names_notes_by_title_and_alias_outside_links_and_code() -> None:
    lines = [
        "# Journal",
        "Baked sourdough bread with the Countess of Lovelace's recipe; `Areas index` and",
        "[[Kbls index]] stay as they are. Sourdough bread again.",
    ]
    assert paragraph_at(lines, 0) is None and paragraph_at(lines, 2) == (1, 2)
    found = name_mentions(CATALOGUE, LinkStyle(), "j.md", lines, 1, 2, {"projects/kbls/index.md"})
    assert [(m.path, m.how, m.words, m.text) for m in found] == [
        ("recipes/sourdough-bread.md", "title", "sourdough bread", "[[sourdough bread]]"),
        ("people/Ada Lovelace.md", "alias", "Countess of Lovelace", "[[Countess of Lovelace]]"),
    ]


def test_no_mention_inside_a_url_an_autolink_or_an_html_tag() -> None:
    catalogue = Catalogue.of([
        NoteName(1, "Library.md", "Library", ()), NoteName(2, "a.md", "A", ()),
        NoteName(3, "Sourdough bread.md", "Sourdough bread", ()),
    ])
    lines = [
        "See https://docs.python.org/3/library/os.html and <https://example.com/sourdough-bread> and *Library*",
        'Also an HTML <a href="library">x</a>, www.library.org and 1 < 2 > 0 sourdough bread.',
    ]
    found = name_mentions(catalogue, LinkStyle(WikiForm.TITLE), "a.md", lines, 0, 1, set())
    assert [(m.line, lines[m.line][m.start : m.end]) for m in found] == [(0, "Library"), (1, "sourdough bread")]


def test_fences_close_on_their_own_marker_and_a_paragraph_is_found_in_one_pass() -> None:
    lines = ["# Log", "```", "# not a heading", "```", "~~~", "```", "still code", "~~~"]
    for i in range(3000):
        lines += [f"## H{i}", ""] + [f"line {j} of a long paragraph" for j in range(10)] + [""]
    assert paragraph_at(lines, 2) is None and paragraph_at(lines, 6) is None
    start = time.perf_counter()
    assert paragraph_at(lines, len(lines) - 5) == (len(lines) - 11, len(lines) - 2)
    assert time.perf_counter() - start < 0.5


def test_a_link_to_a_folder_of_the_root_is_no_problem(tmp_path: Path) -> None:
    root = tmp_path / "my notes é"
    (root / "projects" / "sub dir").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "away").symlink_to(tmp_path / "outside")
    (root / "a.md").write_text("# A\n", encoding="utf-8")
    catalogue = Catalogue.of([NoteName(1, "a.md", "A", ())])
    lines = ["[all projects](projects/) [sub](<projects/sub dir/>)", "[away](away/) [up](../outside/)"]
    found = check_links(catalogue, LinkResolver(root), "a.md", lines)
    assert [(p.ref.line, p.problem) for p in found] == [(1, Problem.OUTSIDE_ROOT), (1, Problem.OUTSIDE_ROOT)]


def test_a_link_to_the_root_itself_is_no_problem(tmp_path: Path) -> None:
    root = tmp_path / "my notes #1 é"
    (root / "sub dir").mkdir(parents=True)
    for rel in ("a.md", "sub dir/b.md"):
        (root / rel).write_text("# N\n", encoding="utf-8")
    catalogue = Catalogue.of([NoteName(1, "a.md", "A", ()), NoteName(2, "sub dir/b.md", "B", ())])
    resolver = LinkResolver(root)
    assert check_links(catalogue, resolver, "a.md", ["[root](./) [also](/) [here](.)"]) == []
    assert check_links(catalogue, resolver, "sub dir/b.md", ["[root](../) [own folder](./)"]) == []
    found = check_links(catalogue, resolver, "sub dir/b.md", ["[out](../../)"])
    assert [p.problem for p in found] == [Problem.OUTSIDE_ROOT]


def test_a_setext_heading_of_several_lines_starts_at_its_first_line() -> None:
    """A paragraph of several lines over `===` is one heading (CommonMark): its text is its lines
    joined, as the indexer reads it, and its symbol covers all of them and the underline."""
    lines = ["# Top", "", "A heading written", "over two lines", "---", "body", "", "Single", "===", "end"]
    view = NoteView(lines)
    assert view.headings == [(0, "Top"), (2, "A heading written over two lines"), (7, "Single")]
    assert view.is_heading(2) and not view.is_heading(3)
    found = symbols(view.lines, view.headings)
    assert [(h.level, h.text, h.line, h.last, h.section_end) for h in found.headings] == [
        (1, "Top", 0, 0, 5), (1, "Single", 7, 8, 9),
    ]
    assert [(c.text, c.line, c.last, c.section_end) for c in found.headings[0].children] == [
        ("A heading written over two lines", 2, 4, 5),
    ]
    assert heading_line(lines, "a-heading-written-over-two-lines") == 2


def test_unlinked_names_are_not_read_in_code_as_the_view_reads_its_fences(
    root: Path, make_engine: Callable[..., Engine]
) -> None:
    """A ``` line inside a ~~~ block does not close it (the view's fences, `fenced_lines`): the
    hint diagnostic's scan had its own toggle, and proposed a link inside the code."""
    (root / "Sourdough bread.md").write_text("# Sourdough bread\n")
    engine = make_engine(root)
    engine.index()
    lines = ["# Log", "~~~", "```", "Sourdough bread in code", "~~~", "", "Sourdough bread outside"]
    found = note_name_mentions(engine.links, "log.md", NoteView(lines))
    assert [(m.line, m.words) for m in found] == [(6, "Sourdough bread")]
