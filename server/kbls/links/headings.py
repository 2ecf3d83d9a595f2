"""A note's headings as every link feature reads them (the one heading reader): ATX (`## Text`)
or setext (`Text` over `===` or `---`), not in a fenced code block nor in front matter; and the
line a link's anchor names (its text, or its GitHub slug numbered as GitHub numbers a repeat).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kbls.indexing.parse import MAX_FRONTMATTER_LINES
from kbls.links.syntax import FENCE, heading_slug, heading_text

_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")


def heading_line(lines: list[str], heading: str) -> int | None:
    """The 0-based line of the heading named `heading` (its text or its anchor, numbered as
    GitHub numbers a repeated one: `notes`, `notes-1`): ATX (`## Text`) or setext (`Text` over
    `===` or `---`), not in code nor in front matter."""
    return heading_line_in(headings(lines), heading)


def heading_line_in(found: Iterable[tuple[int, str]], heading: str) -> int | None:
    """`heading_line` over a note's headings (`headings`) read already."""
    wanted, slug = heading.strip().lower(), heading_slug(heading)
    anchors: dict[str, int] = {}
    for number, text in found:
        base = heading_slug(text)
        repeat = anchors.get(base, 0)
        anchors[base] = repeat + 1
        if text.strip().lower() == wanted or (f"{base}-{repeat}" if repeat else base) == slug:
            return number
    return None


def headings(lines: list[str]) -> Iterator[tuple[int, str]]:
    """Each heading's 0-based line and text, in order: ATX (`## Text`) or setext (`Text` over
    `===` or `---`), not in a fenced code block nor in front matter (the one heading reader every
    link feature uses)."""
    fence: str | None = None
    paragraph: int | None = None  # the line a setext underline would make a heading
    for number in range(_front_matter_end(lines), len(lines)):
        line = lines[number]
        opened = FENCE.match(line)
        if opened:
            marker = opened.group(1)
            if fence is None:
                fence = marker[0] * len(marker)
            elif marker.startswith(fence) and not line.strip()[len(marker) :].strip():
                fence = None
            paragraph = None
            continue
        if fence is not None:
            continue
        text = heading_text(line)
        if text is not None:
            yield number, text
            paragraph = None
            continue
        if paragraph is not None and _SETEXT.match(line):
            yield paragraph, lines[paragraph].strip()
            paragraph = None
            continue
        # an indented line opens no paragraph (it is code) but may continue one
        paragraph = number if line.strip() and (paragraph is not None or not line.startswith("    ")) else None


def _front_matter_end(lines: list[str]) -> int:
    """The first line after a leading `---` front matter block (0 when there is none), as the
    indexer reads one (`kbls.indexing.parse`: closed within MAX_FRONTMATTER_LINES)."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    closing = range(1, min(len(lines), MAX_FRONTMATTER_LINES))
    return next((n + 1 for n in closing if lines[n].rstrip() in ("---", "...")), 0)
