"""A note's parsed view: read once, and after a change only the lines that changed are read
again for links; whatever the edit, the links are those `links_in` reads from the whole text."""

from __future__ import annotations

import pytest

from kbls.links.syntax import links_in
from kbls.links.view import NoteView, NoteViews

BEFORE = [
    "# Café [[a]]",
    "See [[b#Top|B]] and [x](dir/c%20d.md).",
    "[[b#Top|B]] twice.",
    "```",
    "[[in code]]",
    "```",
    "After [[e]] and [[f]].",
    "See [[b#Top|B]] and [x](dir/c%20d.md).",
]


@pytest.mark.parametrize(
    "after",
    [
        ["inserted [[new]] line", *BEFORE],  # every line moved down one
        BEFORE[:3] + BEFORE[4:],  # a fence line gone: `[[in code]]` and what follows are code
        [*BEFORE[:2], "```", *BEFORE[2:]],  # a fence opened: the rest is code
        [line.replace("[[e]]", "[[e2]]") for line in BEFORE],  # one link renamed
        BEFORE + BEFORE,  # each line written twice
        ["a line with no link", "`[[in a code span]]`", *BEFORE[1:]],
    ],
)
def test_links_after_a_change_are_the_whole_texts(after: list[str]) -> None:
    before = NoteView(BEFORE)
    assert before.links == links_in(BEFORE)
    assert NoteView(after, before).links == links_in(after)


def test_a_view_reads_its_text_once_and_answers_at_positions() -> None:
    view = NoteView([f"{line}\r\n" for line in BEFORE])
    assert view.lines == BEFORE
    assert view.links is view.links
    assert view.link_at(1, 6) is not None and view.link_at(1, 6).target == "b"  # type: ignore[union-attr]
    assert view.link_at(4, 3) is None  # in a fence
    assert view.is_heading(0) and not view.is_heading(1)
    tagged = NoteView(["---", "tags: [garden]", "---", "text #ünïcode/child here"])
    tag = tagged.tag_at("n.md", 3, 7)
    assert tag is not None and tag.tag == "ünïcode/child"
    assert tagged.tag_at("n.md", 3, 1) is None
    assert tagged.spans("n.md") is tagged.spans("n.md")


def test_closed_views_are_kept_by_content_the_latest_used() -> None:
    views = NoteViews(kept=2)
    first = views.of("h1", ["# One"])
    assert views.of("h1", ["ignored: same hash"]) is first
    views.of("h2", ["# Two"])
    views.of("h1", [])  # used again: now the latest
    views.of("h3", ["# Three"])  # h2 goes
    assert views.of("h1", []) is first
    assert views.of("h2", ["# Two again"]).lines == ["# Two again"]
