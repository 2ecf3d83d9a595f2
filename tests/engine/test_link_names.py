"""Which note a link names, on the engine (real model, real store): CommonMark's `<…>` link
destinations and link titles, `_` and `%` in a `[[folder/name]]`, `[[name.md]]`, and names written
in either Unicode form (NFC or NFD) or case. Definition (`Engine.links.resolve`), completion
(`Engine.links.suggest`), the link index (`Store.resolve_link_targets`) and related notes' link
reasons (what the hover shows) must agree on each.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tests.support.link_corpus import SLEEPLESS, write_link_workspace

from kbls.engine import Engine
from kbls.indexing.parse import parse_note
from kbls.links.headings import heading_line
from kbls.links.suggest import LinkQuery
from kbls.links.syntax import LinkKind, LinkRef, heading_text, links_in, typing_at

#: one name, composed (macOS keeps file names decomposed; most keyboards type composed).
CAFE_NFC = "Caf\u00e9"
CAFE_NFD = "Cafe\u0301"


def _wiki(target: str, heading: str | None = None) -> LinkRef:
    return LinkRef(LinkKind.WIKI, target, heading, 0, 0, 1)


def _write(root: Path, notes: dict[str, str]) -> None:
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def _ids(engine: Engine) -> dict[str, int]:
    return {row.path: row.id for row in engine.store.note_names()}


def _link_reasons(engine: Engine, rel: str) -> dict[str, list[str]]:
    """path -> the link reasons of each note related to `rel` ("links here", "linked from here")."""
    hits = engine.related(engine.root / rel, limit=50)
    return {h.path: [r for r in h.reasons if "link" in r] for h in hits if any("link" in r for r in h.reasons)}


def test_angle_bracket_destinations_escapes_and_titles_are_read_as_commonmark() -> None:
    lines = [
        '[a](<my notes/a b.md>) [t](a.md "A title") [s](b.md \'single\') [p](c.md (paren))',
        '[e](<a\\>b.md>) [both](<c d.md#Part two> "t") [esc](a\\_b.md) [nested](d(1).md)',
        "[no](<a b.md) [no](<a<b.md>) [no](a b.md) [url](<https://example.org/a b>)",
    ]
    refs = links_in(lines)
    assert [(r.line, r.target, r.heading) for r in refs] == [
        (0, "my notes/a b.md", None), (0, "a.md", None), (0, "b.md", None), (0, "c.md", None),
        (1, "a>b.md", None), (1, "c d.md", "Part two"), (1, "a_b.md", None), (1, "d(1).md", None),
    ]
    first = refs[0]
    assert (first.start, first.end) == (0, len("[a](<my notes/a b.md>)"))
    # The indexer reads the same links (the link index behind related notes and the hover).
    parsed = parse_note("dir/n.md", "\n".join(lines) + "\n")
    assert [target for kind, target in parsed.links if kind == "path"] == [
        "dir/my notes/a b.md", "dir/a.md", "dir/b.md", "dir/c.md", "dir/a>b.md", "dir/c d.md", "dir/a_b.md",
        "dir/d(1).md",
    ]


def test_a_note_with_spaces_in_its_path_is_linked_by_an_angle_bracket_link(
    root: Path, make_engine: Callable[..., Engine]
) -> None:
    _write(root, {
        "my notes/a b.md": "# Spaced\n\nA note whose path holds a space.\n",
        "hub.md": '# Hub\n\nSee [the spaced note](<my notes/a b.md> "Spaced").\n',
    })
    engine = make_engine(root)
    engine.index()
    lines = (root / "hub.md").read_text().split("\n")
    refs = links_in(lines)
    assert [[t.path for t in found] for found in engine.links.resolve("hub.md", refs, lines)] == [["my notes/a b.md"]]
    assert _link_reasons(engine, "hub.md") == {"my notes/a b.md": ["linked from here"]}
    assert _link_reasons(engine, "my notes/a b.md") == {"hub.md": ["links here"]}
    # A path typed in `<…>` is completed as written there (not percent-encoded), closed by `>)`.
    line = "Also [](<my no"
    typing = typing_at([line], 0, len(line))
    assert typing is not None and (typing.kind, typing.typed, typing.angled) == (LinkKind.PATH, "my no", True)
    query = LinkQuery(kind=LinkKind.PATH, typed=typing.typed, context="", document=[line], angled=True)
    assert [(s.path, s.insert) for s in engine.links.suggest("hub.md", query)] == [("my notes/a b.md", "my notes/a b.md>)")]
    written = "[x](<my no tes/a b.md>) after"
    inside = typing_at([written], 0, len("[x](<my no"))
    assert inside is not None and (inside.replace_start, inside.replace_end) == (5, written.index(" after"))


def test_underscore_and_percent_in_a_folder_name_match_only_themselves(
    root: Path, make_engine: Callable[..., Engine]
) -> None:
    """`[[a_b/c]]` once matched `axb/c.md` too (SQL LIKE read `_` and `%` as wildcards)."""
    _write(root, {
        "a_b/c.md": "# First\n\nUnderscore folder.\n",
        "axb/c.md": "# Second\n\nAn x where the underscore was.\n",
        "p%/d.md": "# Third\n\nPercent folder.\n",
        "pq/d.md": "# Fourth\n\nA q where the percent sign was.\n",
        "links.md": "# Links\n\n[[a_b/c]] and [[p%/d]]\n",
    })
    engine = make_engine(root)
    engine.index()
    ids = _ids(engine)
    assert engine.store.resolve_link_targets([], ["a_b/c"]) == {ids["a_b/c.md"]}
    assert engine.store.resolve_link_targets([], ["P%/D"]) == {ids["p%/d.md"]}
    resolved = engine.links.resolve("links.md", [_wiki("a_b/c"), _wiki("p%/d")], [])
    assert [[t.path for t in found] for found in resolved] == [["a_b/c.md"], ["p%/d.md"]]
    assert _link_reasons(engine, "links.md") == {"a_b/c.md": ["linked from here"], "p%/d.md": ["linked from here"]}
    assert "links.md" not in _link_reasons(engine, "axb/c.md")


def test_a_wiki_link_written_with_the_extension_names_the_note(
    root: Path, make_engine: Callable[..., Engine]
) -> None:
    write_link_workspace(root, "title")
    (root / "journal").mkdir()
    (root / "journal/today.md").write_text("# Today\n\nSee [[sleep.md]] tonight.\n", encoding="utf-8")
    engine = make_engine(root)
    engine.index()
    routine = (root / "health/sleep.md").read_text().split("\n").index("## Evening routine")
    refs = [_wiki("sleep.md"), _wiki("health/sleep.md"), _wiki("SLEEP.MD", "Evening routine"), _wiki("sleep.md.md")]
    resolved = engine.links.resolve("journal/today.md", refs, [])
    assert [[(t.path, t.line) for t in found] for found in resolved] == [
        [("health/sleep.md", 0)], [("health/sleep.md", 0)], [("health/sleep.md", routine)], [],
    ]
    sleep = _ids(engine)["health/sleep.md"]
    assert engine.store.resolve_link_targets([], ["sleep.md"]) == {sleep}
    assert engine.store.resolve_link_targets([], ["Health/Sleep.md"]) == {sleep}
    assert _link_reasons(engine, "journal/today.md") == {"health/sleep.md": ["linked from here"]}
    assert _link_reasons(engine, "health/sleep.md")["journal/today.md"] == ["links here"]
    query = LinkQuery(kind=LinkKind.WIKI, typed="sleep.md", context=SLEEPLESS, document=[])
    found = engine.links.suggest("journal/today.md", query)
    assert [(s.path, s.matched) for s in found] == [("health/sleep.md", "file name")]


def test_names_match_in_either_unicode_form_and_in_any_case(root: Path, make_engine: Callable[..., Engine]) -> None:
    """A file named in NFD (as macOS writes names) and links typed in NFC, and the reverse; a
    title whose capitals are not ASCII (SQLite's lower() folds ASCII only)."""
    brulee_nfc, brulee_nfd = "Cr\u00e8me br\u00fbl\u00e9e", "Cre\u0300me bru\u0302le\u0301e"
    _write(root, {
        f"{CAFE_NFD}.md": "# Coffee house\n\nEspresso and croissants at the corner.\n",
        "dessert.md": f"# {brulee_nfc}\n\nCustard under a burnt sugar crust.\n",
        "summer.md": "# \u00c9t\u00e9\n\nThe warm months by the sea.\n",
        "links.md": f"# Links\n\n[[{CAFE_NFC}]], [[{brulee_nfd}]] and [[\u00e9t\u00e9]]\n",
    })
    engine = make_engine(root)
    engine.index()
    ids = _ids(engine)
    assert f"{CAFE_NFD}.md" in ids  # the name as the file system holds it
    refs = [_wiki(CAFE_NFC), _wiki(CAFE_NFD), _wiki(CAFE_NFC.upper()), _wiki(brulee_nfd), _wiki("\u00c9T\u00c9")]
    resolved = engine.links.resolve("links.md", refs, [])
    assert [[t.path for t in found] for found in resolved] == [
        [f"{CAFE_NFD}.md"], [f"{CAFE_NFD}.md"], [f"{CAFE_NFD}.md"], ["dessert.md"], ["summer.md"],
    ]
    assert engine.store.resolve_link_targets([], [CAFE_NFC]) == {ids[f"{CAFE_NFD}.md"]}
    assert engine.store.resolve_link_targets([], [brulee_nfd.upper()]) == {ids["dessert.md"]}
    assert engine.store.resolve_link_targets([], ["\u00e9t\u00e9"]) == {ids["summer.md"]}
    assert _link_reasons(engine, "links.md") == {
        f"{CAFE_NFD}.md": ["linked from here"], "dessert.md": ["linked from here"], "summer.md": ["linked from here"],
    }
    for rel in (f"{CAFE_NFD}.md", "dessert.md", "summer.md"):
        assert _link_reasons(engine, rel) == {"links.md": ["links here"]}, rel
    typed = LinkQuery(kind=LinkKind.WIKI, typed=CAFE_NFC, context="", document=[])
    assert [s.path for s in engine.links.suggest("links.md", typed)] == [f"{CAFE_NFD}.md"]
    typed = LinkQuery(kind=LinkKind.WIKI, typed=brulee_nfd[:5], context="", document=[])
    assert [s.path for s in engine.links.suggest("links.md", typed)] == ["dessert.md"]


def test_heading_text_reads_atx_headings_as_commonmark_in_linear_time() -> None:
    """One ATX pattern serves the link context and the heading look-up (`retrieval.links`)."""
    assert heading_text("## C#") == "C#"  # a closing run needs a space before it
    assert heading_text("  ### Evening routine ###  ") == "Evening routine"
    assert heading_text("#") == "" and heading_text("## ##") == ""
    assert heading_text("#tag line") is None and heading_text("####### seven") is None
    assert heading_text("    # indented code") is None
    assert heading_line(["# Notes", "", "## C#", "text"], "C#") == 2
    # A run of spaces inside a heading: the lazy `(.*?)\s*#*\s*$` this replaced took 88 s at 5,000.
    started = time.perf_counter()
    assert heading_text("# a" + " " * 200_000 + "b") == "a" + " " * 200_000 + "b"
    assert heading_line(["# a" + " " * 200_000 + "b", "## Next"], "Next") == 1
    assert time.perf_counter() - started < 0.5
