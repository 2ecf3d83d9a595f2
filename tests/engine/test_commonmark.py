"""The markdown block structure agrees with the CommonMark spec's own examples.

`tests/fixtures/commonmark/spec-blocks.json` holds the spec's examples (0.31.2) for thematic
breaks, ATX and setext headings, indented and fenced code blocks, list items and lists: the
markdown and the HTML the spec says it renders to. For each one, the top-level headings we find
(level and text) and the number of top-level code blocks must be those of the HTML.
"""

from __future__ import annotations

import html
import json
from html.parser import HTMLParser
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from kbls.indexing.markdown import parse_markdown
from kbls.indexing.parse import parse_note

SPEC = json.loads((Path(__file__).parent.parent / "fixtures" / "commonmark" / "spec-blocks.json").read_text("utf-8"))
EXAMPLES: list[dict[str, Any]] = SPEC["examples"]


class _Outline(HTMLParser):
    """Top-level headings (outside lists and block quotes) and top-level code blocks of spec HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.headings: list[tuple[int, str]] = []
        self.code_blocks = 0
        self._heading: tuple[int, list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("li", "blockquote", "ul", "ol"):
            self.depth += 1
        elif self.depth == 0 and len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self._heading = (int(tag[1]), [])
        elif self.depth == 0 and tag == "pre":
            self.code_blocks += 1
        elif tag == "img" and self._heading is not None:
            self._heading[1].append(dict(attrs).get("alt") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("li", "blockquote", "ul", "ol"):
            self.depth -= 1
        elif self._heading is not None and tag == f"h{self._heading[0]}":
            level, parts = self._heading
            self.headings.append((level, " ".join("".join(parts).split())))
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading[1].append(data)


def _outline(spec_html: str) -> _Outline:
    outline = _Outline()
    outline.feed(spec_html)
    outline.close()
    return outline


def test_the_fixture_is_the_spec_s_block_sections() -> None:
    assert SPEC["version"] == "0.31.2"
    sections = {e["section"] for e in EXAMPLES}
    assert {"ATX headings", "Setext headings", "Fenced code blocks", "Thematic breaks", "Lists"} <= sections
    assert len(EXAMPLES) == 179


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e['example']}-{e['section']}" for e in EXAMPLES])
def test_headings_and_code_blocks_agree_with_the_spec(example: dict[str, Any]) -> None:
    text = example["markdown"]
    lines = text.split("\n")
    expected = _outline(example["html"])
    structure = parse_markdown(lines, front_matter=False)
    headings = [(b.heading_level, b.heading_text) for b in structure.blocks if b.heading_level]
    assert headings == expected.headings
    assert sum(b.is_code for b in structure.blocks) == expected.code_blocks
    # Blocks are in order, apart, and inside the text.
    for before, after in pairwise(structure.blocks):
        assert before.end < after.start
    assert all(0 <= b.start <= b.end < len(lines) for b in structure.blocks)


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e['example']}-{e['section']}" for e in EXAMPLES])
def test_a_note_has_one_heading_block_per_spec_heading(example: dict[str, Any]) -> None:
    text = example["markdown"]
    if text.startswith("---"):
        pytest.skip("a leading --- opens front matter in a note")
    note = parse_note("spec.md", text)
    heading_blocks = [b for s in note.sections for b in s.blocks if b.is_heading]
    assert len(heading_blocks) == len(_outline(example["html"]).headings)
    # Every non-blank line that is not a thematic break is kept in some block.
    kept = {n for s in note.sections for b in s.blocks for n in range(b.start_line, b.end_line + 1)}
    for number, line in enumerate(text.split("\n")):
        if line.strip() and number not in kept:
            assert set(line.strip()) <= set("*-_ \t"), f"line {number} lost: {line!r}"


def test_html_entities_in_a_heading_read_as_text() -> None:
    structure = parse_markdown(["# Fish &amp; chips", ""])
    assert [b.heading_text for b in structure.blocks] == [html.unescape("Fish &amp; chips")]
