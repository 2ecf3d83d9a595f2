"""Link completion and resolution on the engine (real model, real store): `Engine.links`."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.files import run_beside_fifo
from tests.support.link_corpus import SLEEPLESS, write_link_workspace

from kbls.editing.linkcheck import Problem, check_links
from kbls.engine import Engine
from kbls.links import suggest
from kbls.links.suggest import LinkQuery
from kbls.links.syntax import LinkKind, LinkRef, context_around, heading_slug, link_at, links_in, opening_at, typing_at

SOURCE = "journal/today.md"


def _engine(root: Path, make_engine: Callable[..., Engine], style: str) -> Engine:
    write_link_workspace(root, style)
    (root / "journal").mkdir()
    (root / SOURCE).write_text("# Today\n\n", encoding="utf-8")
    engine = make_engine(root)
    engine.index()
    return engine


def _query(typed: str = "", kind: LinkKind = LinkKind.WIKI, context: str = SLEEPLESS) -> LinkQuery:
    return LinkQuery(kind=kind, typed=typed, context=context, document=["# Today", "", context])


def _wiki(target: str, heading: str | None = None) -> LinkRef:
    return LinkRef(LinkKind.WIKI, target, heading, 0, 0, 1)


def _path(target: str, heading: str | None = None) -> LinkRef:
    return LinkRef(LinkKind.PATH, target, heading, 0, 0, 1)


def test_meaning_alone_finds_the_note_of_the_paragraph(root: Path, make_engine: Callable[..., Engine]) -> None:
    engine = _engine(root, make_engine, "title")
    found = engine.links.suggest(SOURCE, _query())
    assert found[0].path == "health/sleep.md"
    assert found[0].matched is None and found[0].meaning is not None and found[0].meaning > 0.2
    assert SOURCE not in [s.path for s in found]
    assert found[0].insert == "Sleep hygiene]]"
    assert found[0].breadcrumb.startswith("Sleep hygiene") and found[0].snippet


def test_typing_narrows_to_the_names_that_start_with_it(root: Path, make_engine: Callable[..., Engine]) -> None:
    engine = _engine(root, make_engine, "title")
    assert [s.path for s in engine.links.suggest(SOURCE, _query("Gro"))] == ["garden/tomatoes.md"]
    by_word = engine.links.suggest(SOURCE, _query("hyg"))
    assert [s.path for s in by_word] == ["health/sleep.md"] and by_word[0].matched == "title"
    assert [s.path for s in engine.links.suggest(SOURCE, _query("index-f"))] == ["finance/index-funds.md"]
    assert engine.links.suggest(SOURCE, _query("zzz")) == []


def test_blend_puts_the_nearer_meaning_first_among_name_matches(root: Path, make_engine: Callable[..., Engine]) -> None:
    """'s' starts Sleep hygiene and Sourdough starter: the paragraph's meaning orders them."""
    engine = _engine(root, make_engine, "title")
    found = engine.links.suggest(SOURCE, _query("s"))
    assert {s.path for s in found} >= {"health/sleep.md", "cooking/sourdough.md"}
    assert found[0].path == "health/sleep.md"
    bread = engine.links.suggest(SOURCE, _query("s", context="Feed the culture with flour so the loaf rises."))
    assert bread[0].path == "cooking/sourdough.md"


@pytest.mark.parametrize(("style", "inserted"), [("title", "Sleep hygiene]]"), ("path", "health/sleep|Sleep hygiene]]")])
def test_wiki_links_follow_the_workspace_style(
    root: Path, make_engine: Callable[..., Engine], style: str, inserted: str
) -> None:
    engine = _engine(root, make_engine, style)
    assert engine.links.suggest(SOURCE, _query("Sle"))[0].insert == inserted


def test_markdown_links_are_relative_to_the_note(root: Path, make_engine: Callable[..., Engine]) -> None:
    engine = _engine(root, make_engine, "title")
    found = engine.links.suggest(SOURCE, _query("", kind=LinkKind.PATH))
    assert found[0].insert == "../health/sleep.md)" and found[0].label == "Sleep hygiene"
    assert [s.path for s in engine.links.suggest(SOURCE, _query("../garden/to", kind=LinkKind.PATH))] == [
        "garden/tomatoes.md"
    ]


def test_resolution_of_wiki_and_relative_links(root: Path, make_engine: Callable[..., Engine]) -> None:
    engine = _engine(root, make_engine, "title")
    routine = (root / "health/sleep.md").read_text().split("\n").index("## Evening routine")
    refs = [
        _wiki("Sleep hygiene"), _wiki("sleep"), _wiki("health/sleep"), _wiki("SLEEP", "Evening routine"),
        _path("../health/sleep.md", heading_slug("Evening routine")), _path("/health/sleep.md"),
        _wiki("No such note"), _path("../../outside.md"), _path("/etc/passwd"), _path("../../../etc/passwd"),
    ]
    targets = engine.links.resolve(SOURCE, refs, [])
    assert [[(t.path, t.line) for t in found] for found in targets] == [
        [("health/sleep.md", 0)], [("health/sleep.md", 0)], [("health/sleep.md", 0)],
        [("health/sleep.md", routine)], [("health/sleep.md", routine)], [("health/sleep.md", 0)],
        [], [], [], [],
    ]


def test_a_heading_of_the_note_itself_and_ambiguous_titles(root: Path, make_engine: Callable[..., Engine]) -> None:
    write_link_workspace(root, "title")
    (root / "other").mkdir()
    (root / "other/sleep-notes.md").write_text("# Sleep hygiene\n\nA second note of that title.\n")
    (root / "today.md").write_text("# Today\n")
    engine = make_engine(root)
    engine.index()
    lines = ["# Today", "", "## Plans", "[[#Plans]]"]
    own, both = engine.links.resolve("today.md", [_wiki("", "Plans"), _wiki("Sleep hygiene")], lines)
    assert [(t.path, t.line) for t in own] == [("today.md", 2)]
    assert sorted(t.path for t in both) == ["health/sleep.md", "other/sleep-notes.md"]
    # A title shared by two notes is not inserted as a bare title (it would name both): the
    # file name is, labelled with the title.
    found = engine.links.suggest("today.md", _query("Sleep h"))
    assert {s.insert for s in found} == {"sleep|Sleep hygiene]]", "sleep-notes|Sleep hygiene]]"}


def test_a_symlink_leading_out_of_the_root_is_never_answered(
    root: Path, tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    write_link_workspace(root, "title")
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nOutside the root.\n")
    (root / "escape.md").symlink_to(secret)
    engine = make_engine(root)
    engine.index()
    assert engine.links.resolve("x.md", [_path("escape.md"), _wiki("escape"), _wiki("Secret")], []) == [[], [], []]


def test_link_syntax_positions() -> None:
    lines = ["See [[Sleep hygiene#Evening routine|bed]] and [the fund](../finance/index-funds.md).",
             "```", "[[not a link]]", "```", "`[[code]]` [[Kyoto]]"]
    refs = links_in(lines)
    assert [(r.kind, r.target, r.heading, r.line, r.labelled) for r in refs] == [
        (LinkKind.WIKI, "Sleep hygiene", "Evening routine", 0, True),
        (LinkKind.PATH, "../finance/index-funds.md", None, 0, True),
        (LinkKind.WIKI, "Kyoto", None, 4, False),
    ]
    assert link_at(lines, 0, 6) == refs[0] and link_at(lines, 2, 4) is None and link_at(lines, 0, 2) is None
    typing = typing_at(["Tonight [[Sle]]"], 0, 13)
    assert typing is not None and (typing.kind, typing.typed, typing.replace_start, typing.replace_end) == (
        LinkKind.WIKI, "Sle", 10, 15
    )
    markdown = typing_at(["a [](../he"], 0, 10)
    assert markdown is not None and (markdown.kind, markdown.typed, markdown.empty_label_at) == (LinkKind.PATH, "../he", 3)
    assert typing_at(["[[a|b"], 0, 5) is None and typing_at(["`[[x"], 0, 4) is None and typing_at(["plain"], 0, 3) is None
    paragraph = ["# Tonight", "", SLEEPLESS + "[[Sle]] more.", "next line"]
    at = typing_at(paragraph, 2, len(SLEEPLESS) + 5)
    assert at is not None and context_around(paragraph, at) == SLEEPLESS + " more. next line"
    short = ["# Evening", "", "Keep it dark.", "", "[["]
    at = typing_at(short, 4, 2)
    assert at is not None and context_around(short, at) == "Evening Keep it dark."


@pytest.mark.parametrize(("lone", "double"), [("Dark room. [", "Dark room. [["), ("Dark room. []", "Dark room. [[]]")])
def test_a_lone_bracket_has_the_context_the_wiki_link_will_have(lone: str, double: str) -> None:
    """The server warms the paragraph's notes at `[`: the key must be the one `[[` asks for."""
    first = opening_at(["# Night", lone], 1, len("Dark room. ["))
    second = typing_at(["# Night", double], 1, len("Dark room. [["))
    assert first is not None and second is not None
    assert context_around(["# Night", lone], first) == context_around(["# Night", double], second)
    assert opening_at(["a [["], 0, 4) is None and opening_at(["`[`"], 0, 2) is None and opening_at(["ab"], 0, 2) is None


def test_a_link_with_a_nul_byte_or_a_huge_path_resolves_to_nothing(
    root: Path, make_engine: Callable[..., Engine]
) -> None:
    """`[x](a%00b.md)` decodes to a path no file system takes: nowhere, not a crashed request."""
    engine = _engine(root, make_engine, "title")
    refs = [_path("a\x00b.md"), _path("a\x00b.md", "h"), _wiki("x" * 5000), _path("x" * 5000 + ".md"), _wiki("Sleep hygiene")]
    targets = engine.links.resolve(SOURCE, refs, [])
    assert [[t.path for t in found] for found in targets] == [[], [], [], [], ["health/sleep.md"]]


def test_a_title_a_wiki_link_cannot_hold_is_not_inserted_bare(root: Path, make_engine: Callable[..., Engine]) -> None:
    """`#` starts a heading and `|` a label inside `[[…]]`, brackets end it: such a title is
    the label of a link by the file name, and every inserted link names its note again."""
    write_link_workspace(root, "title")
    (root / "csharp.md").write_text("# C# tips\n\nPattern matching in C sharp.\n")
    (root / "either.md").write_text("# Tea | coffee\n\nMorning drinks compared.\n")
    (root / "arrays.md").write_text("# Arrays [draft]\n\nIndexing from zero.\n")
    (root / "today.md").write_text("# Today\n")
    engine = make_engine(root)
    engine.index()
    for typed, path in (("C#", "csharp.md"), ("Tea", "either.md"), ("Arrays", "arrays.md")):
        found = [s for s in engine.links.suggest("today.md", _query(typed)) if s.path == path]
        assert found, typed
        line = "[[" + found[0].insert
        (ref,) = links_in([line])
        assert (ref.start, ref.end) == (0, len(line)), line
        assert [t.path for t in engine.links.resolve("today.md", [ref], [line])[0]] == [path], line


def test_a_huge_alias_costs_the_catalogue_no_more_than_a_long_name(
    root: Path, make_engine: Callable[..., Engine]
) -> None:
    """Every word start of a name is a prefix key: a 20,000-character alias of short words made
    10,000 keys of up to 20,000 characters each (quadratic; 200 KB would take gigabytes)."""
    write_link_workspace(root, "title")
    words = " ".join(f"w{i}" for i in range(4000))
    (root / "huge.md").write_text(f'---\naliases: ["{words}"]\n---\n# Huge\n\nA note with one long alias.\n')
    engine = make_engine(root)
    engine.index()
    catalogue = engine.links.catalogue()
    assert sum(len(key) for key in catalogue._keys) < 2_000_000
    assert [s.path for s in engine.links.suggest("x.md", _query("w12"))] == ["huge.md"]
    assert [n.path for n in catalogue.named(words, "x.md")] == ["huge.md"]


def test_many_links_to_headings_read_each_note_once(
    root: Path, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document's links are resolved on every change (documentLink, up to 2,000 links): each
    link to a heading read its note again (up to 2 MB) and scanned it; now once per request."""
    write_link_workspace(root, "title")
    (root / "glossary.md").write_text("# Glossary\n\n" + "".join(f"## Term {i}\n\nAbout it.\n\n" for i in range(20)))
    (root / "today.md").write_text("# Today\n")
    engine = make_engine(root)
    engine.index()
    reads: list[str] = []
    read_lines = engine.links.resolver.read_lines

    def counted(rel: str, limit: int) -> list[str] | None:
        reads.append(rel)
        return read_lines(rel, limit)

    monkeypatch.setattr(engine.links.resolver, "read_lines", counted)
    refs = [_wiki("glossary", f"Term {i % 20}") for i in range(400)] + [_wiki("", "Own")] * 400
    lines = ["# Today", *(["text"] * 20_000), "## Own"]
    started = time.perf_counter()
    targets = engine.links.resolve("today.md", refs, lines)
    elapsed = time.perf_counter() - started
    assert [found[0].line for found in targets[:20]] == [2 + 4 * i for i in range(20)]
    assert {(found[0].path, found[0].line) for found in targets[400:]} == {("today.md", 20_001)}
    assert reads == ["glossary.md"]
    assert elapsed < 1.0, elapsed


def test_links_to_setext_headings_and_not_to_front_matter(root: Path, make_engine: Callable[..., Engine]) -> None:
    """The indexer reads underlined (setext) headings; a link to one opens at it. A front matter
    line above its closing `---` is no heading, nor a shell comment in a code block."""
    write_link_workspace(root, "title")
    text = (
        "---\ntitle: Setext\n# draft\n---\n\nIntro.\n\nFirst part\n==========\n\nBody.\n\n"
        "```sh\n# Comment\n```\n\nSecond part\n-----------\n\nMore.\n"
    )
    (root / "setext.md").write_text(text)
    (root / "today.md").write_text("# Today\n")
    engine = make_engine(root)
    engine.index()
    lines = text.split("\n")
    refs = [_wiki("setext", h) for h in ("First part", "second-part", "title: Setext", "draft", "Comment")]
    targets = engine.links.resolve("today.md", refs, [])
    assert [found[0].line for found in targets] == [lines.index("First part"), lines.index("Second part"), 0, 0, 0]


def test_a_link_to_a_heading_of_a_note_not_yet_saved(root: Path, make_engine: Callable[..., Engine]) -> None:
    """A new note open in the editor, never saved: its own headings are in its text."""
    engine = _engine(root, make_engine, "title")
    lines = ["# New", "", "## Plans", "[[#Plans]] [x](#plans)"]
    found = engine.links.resolve("new.md", [_wiki("", "Plans"), _path("", "plans")], lines)
    assert [[(t.path, t.line) for t in targets] for targets in found] == [[("new.md", 2)], [("new.md", 2)]]


def test_the_context_of_a_short_paragraph_stops_at_its_heading() -> None:
    """A heading right above the paragraph is its topic, read without its `#`s; the lines above
    that heading belong to another section and are not joined (they were, up to 40 lines)."""
    lines = ["# Diet", "Coffee after noon and late meals.", "", "## Sleep", "Short [["]
    at = typing_at(lines, 4, 8)
    assert at is not None and context_around(lines, at) == "Sleep Short"
    below = ["# Diet", "Coffee after noon.", "", "## Sleep", "Dark room, cool air, no screens, and a fixed hour [["]
    at = typing_at(below, 4, len(below[4]))
    assert at is not None and context_around(below, at) == "Sleep Dark room, cool air, no screens, and a fixed hour"


def test_completing_inside_a_written_link_replaces_its_name() -> None:
    """With the cursor inside an existing link's name, the completion (which brings its own
    closing) replaced only what was before the cursor: `[[Sl|eep]]` became `[[Sleep]]eep]]`."""
    inside = typing_at(["a [[Sl" + "eep]] b"], 0, 6)
    assert inside is not None and (inside.typed, inside.replace_start, inside.replace_end) == ("Sl", 4, 11)
    path = typing_at(["a [x](../he" + "alth.md) b"], 0, 11)
    assert path is not None and (path.typed, path.replace_start, path.replace_end) == ("../he", 6, 19)
    # a label or heading after the name would be lost or doubled: no completion there
    assert typing_at(["[[Sl" + "eep|label]]"], 0, 4) is None and typing_at(["[[Sl" + "eep#Part]]"], 0, 4) is None
    closed = typing_at(["[[Sl]] and more"], 0, 4)
    assert closed is not None and (closed.replace_start, closed.replace_end) == (2, 6)
    open_ended = typing_at(["[[Sl and more"], 0, 4)
    assert open_ended is not None and (open_ended.replace_start, open_ended.replace_end) == (2, 4)


def test_a_link_to_a_repeated_heading_by_its_numbered_anchor(root: Path, make_engine: Callable[..., Engine]) -> None:
    """GitHub numbers a repeated heading's anchor (`#notes`, `#notes-1`, `#notes-2`), as the
    tables of contents it writes link them."""
    write_link_workspace(root, "title")
    text = "# Trips\n\n## Kyoto\n\n### Notes\n\nA.\n\n## Lisbon\n\n### Notes\n\nB.\n\n## Oslo\n\n### Notes\n\nC.\n"
    (root / "trips.md").write_text(text)
    (root / "today.md").write_text("# Today\n")
    engine = make_engine(root)
    engine.index()
    lines = text.split("\n")
    notes = [n for n, line in enumerate(lines) if line == "### Notes"]
    refs = [_path("trips.md", anchor) for anchor in ("notes", "notes-1", "notes-2", "notes-3", "Notes")]
    targets = engine.links.resolve("today.md", refs, [])
    assert [found[0].line for found in targets] == [*notes, 0, notes[0]]


def test_a_markdown_link_label_from_a_title_with_brackets_is_still_a_link(
    root: Path, make_engine: Callable[..., Engine]
) -> None:
    """The title fills an empty label (`[](`): brackets in it made text no link form reads."""
    write_link_workspace(root, "title")
    (root / "arrays.md").write_text("# Arrays [draft]\n\nIndexing from zero.\n")
    (root / "today.md").write_text("# Today\n")
    engine = make_engine(root)
    engine.index()
    (found,) = [s for s in engine.links.suggest("today.md", _query("Arrays", LinkKind.PATH)) if s.path == "arrays.md"]
    line = f"[{found.label}](" + found.insert
    (ref,) = links_in([line])
    assert (ref.start, ref.end, found.label) == (0, len(line), "Arrays draft")
    assert [t.path for t in engine.links.resolve("today.md", [ref], [line])[0]] == ["arrays.md"]


def test_a_note_swapped_for_a_fifo_after_its_check_is_not_read(tmp_path: Path) -> None:
    """`read_lines` checks `is_file` and then opens: a FIFO taking the name in between blocked the
    request thread (link resolution, heading lookups) forever on `open`."""
    import os

    from kbls.links.resolve import LinkResolver

    note = tmp_path / "swapped.md"
    note.write_text("# Swapped\n")
    resolver = LinkResolver(tmp_path)
    checked = resolver.inside

    def inside_then_swap(rel: str) -> Path | None:
        found = checked(rel)  # a regular file when checked
        note.unlink()
        os.mkfifo(note)
        return found

    resolver.inside = inside_then_swap  # type: ignore[method-assign]  # the swap lands between check and open
    lines = run_beside_fifo(lambda: resolver.read_lines("swapped.md", 4096), note, "read_lines", timeout=10)
    assert lines is None


def test_a_link_checked_in_one_note_is_answered_for_its_neighbours_but_not_for_its_target(
    root: Path, make_engine: Callable[..., Engine]
) -> None:
    """What a link says is kept by the folder it is written in: a second note of the folder is
    answered without resolving it again, while the note the link names, where it is a link into
    its own text, is checked from its text (its heading is missing there, not on the disk)."""
    (root / "a").mkdir()
    (root / "a" / "target.md").write_text("# Target\n\n## Kept\n")
    (root / "a" / "one.md").write_text("# One\n")
    engine = make_engine(root)
    engine.index()
    catalogue = engine.links.catalogue()
    refs = [_wiki("target", "Kept"), _wiki("nowhere")]
    first = check_links(catalogue, engine.links.resolver, "a/one.md", ["# One"], refs)
    assert [p.problem for p in first] == [Problem.MISSING_NOTE]
    resolved: list[LinkRef] = []
    resolve = engine.links.resolver.resolve

    def counted(*args: Any) -> Any:
        resolved.append(args[2])
        return resolve(*args)

    engine.links.resolver.resolve = counted  # type: ignore[method-assign]
    again = check_links(catalogue, engine.links.resolver, "a/two.md", ["# Two"], refs)
    assert [(p.problem, p.message) for p in again] == [(p.problem, p.message) for p in first]
    assert resolved == []  # both answered from the folder's kept problems
    own = check_links(catalogue, engine.links.resolver, "a/target.md", ["# Target", "no heading now"], refs)
    assert [p.problem for p in own] == [Problem.MISSING_HEADING, Problem.MISSING_NOTE]
    assert own[0].message == 'this note has no heading "Kept"'


def test_without_the_file_watcher_what_was_read_from_the_disk_is_read_again(
    root: Path, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `KBLS_NO_WATCH=1` nothing indexes a note changed outside the editor, so the catalogue
    (made again only when the index changes) must not keep a heading or a file it read for longer
    than DISK_FACTS_TTL_S; with the watcher on, the index's change makes a new catalogue."""
    (root / "target.md").write_text("# Target\n")
    engine = make_engine(root)
    engine.index()
    refs = [_wiki("target", "Later"), _wiki("target")]

    def problems() -> list[Problem]:
        found = check_links(engine.links.catalogue(), engine.links.resolver, "today.md", ["# Today"], refs)
        return [p.problem for p in found]

    monkeypatch.setenv("KBLS_NO_WATCH", "1")
    assert problems() == [Problem.MISSING_HEADING]
    (root / "target.md").write_text("# Target\n\n## Later\n")  # not indexed: no watcher
    assert problems() == [Problem.MISSING_HEADING]  # kept within the TTL
    monkeypatch.setattr(suggest, "DISK_FACTS_TTL_S", 0.0)
    assert problems() == []  # the heading read again
    (root / "target.md").unlink()
    assert problems() == [Problem.MISSING_NOTE, Problem.MISSING_NOTE]  # indexed still, but gone
