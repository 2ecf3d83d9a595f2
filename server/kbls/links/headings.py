"""A note's headings as every link feature reads them (the one heading reader), and where its
front matter ends: ATX (`## Text`)
or setext (`Text` over `===` or `---`), not in a fenced code block nor in front matter; and the
line a link's anchor names (its text, or its GitHub slug numbered as GitHub numbers a repeat).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from kbls.indexing.parse import MAX_FRONTMATTER_LINES
from kbls.links.syntax import fenced_lines, heading_slug, heading_text

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


def front_matter_close(lines: Sequence[str]) -> int:
    """The line of a leading `---` front matter block's closing `---` or `...` (0 when there is
    none), as the indexer reads one (`kbls.indexing.parse`: closed within MAX_FRONTMATTER_LINES)."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    return next((n for n in range(1, min(len(lines), MAX_FRONTMATTER_LINES)) if lines[n].rstrip() in ("---", "...")), 0)


def body_start(lines: Sequence[str]) -> int:
    """The first line after the front matter (0 when there is none)."""
    closing = front_matter_close(lines)
    return closing + 1 if closing else 0


def headings(lines: list[str]) -> Iterator[tuple[int, str]]:
    """Each heading's 0-based line and text, in order: ATX (`## Text`) or setext (`Text` over
    `===` or `---`; a paragraph of several lines over its underline is one heading, at its first
    line, its lines' text joined by spaces), not in a fenced code block (`fenced_lines`) nor in
    front matter (the one heading reader every link feature uses)."""
    start = body_start(lines)
    fenced = fenced_lines(lines[start:])
    paragraph: int | None = None  # the first line of the paragraph a setext underline would make a heading
    for number in range(start, len(lines)):
        line = lines[number]
        if fenced and number - start in fenced:
            paragraph = None
            continue
        first = line.lstrip()[:1]
        if not first:
            paragraph = None  # a blank line ends a paragraph
            continue
        if first == "#":
            text = heading_text(line)
            if text is not None:
                yield number, text
                paragraph = None
                continue
        elif paragraph is not None and first in "=-" and _SETEXT.match(line):
            yield paragraph, " ".join(lines[n].strip() for n in range(paragraph, number))
            paragraph = None
            continue
        # an indented line opens no paragraph (it is code) but may continue one
        if paragraph is None and not line.startswith("    "):
            paragraph = number


def setext_underline(lines: Sequence[str], line: int) -> int | None:
    """The underline of the setext heading whose first line is `line` (`headings`), if it is one."""
    for number in range(line + 1, len(lines)):
        if not lines[number].strip():
            return None
        if _SETEXT.match(lines[number]):
            return number
    return None
