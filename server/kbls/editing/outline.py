"""A note's outline and folds from its CommonMark block parse (markdown-it-py): headings nested
by level, each over its section; the front matter with its keys; and the ranges an editor folds
(sections, fenced and indented code, front matter, lists and their items, block quotes, HTML
comments).

The parse is block level only (no inline rules), as the indexer's (`kbls.indexing.markdown`), so
a `# comment` inside a fence is no heading and `- item` followed by `---` is a list and a break.
It costs ~50 µs a line (markdown-it-py), so the LSP layer parses a document once per version
and keeps the result; a note longer than `MAX_OUTLINE_LINES` is outlined up to there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from kbls.indexing.markdown import MAX_NESTING, heading_text

#: lines of a note that are outlined (markdown-it holds ~400 bytes per token: bounded memory).
MAX_OUTLINE_LINES = 20_000
#: a top-level front matter key: `title:`, `tags:` (not a list item, comment or continuation).
_KEY = re.compile(r"^([^\s#:\-][^:]*?)\s*:(?:\s|$)")

_PARSER = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING}).disable(["inline", "text_join"]).use(
    front_matter_plugin
)


class FoldKind(str, Enum):
    SECTION = "section"
    CODE = "code"
    FRONT_MATTER = "front matter"
    LIST = "list"
    QUOTE = "quote"
    COMMENT = "comment"


@dataclass(frozen=True, slots=True)
class Fold:
    """Lines `start`..`end` (0-based, inclusive) fold together."""

    start: int
    end: int
    kind: FoldKind


@dataclass(slots=True)
class Heading:
    """A heading and its section: `line`..`last` is the heading itself (a setext heading's
    underline included), `line`..`section_end` the section, up to the next heading of its level
    or above (blank lines at its end left out)."""

    level: int
    text: str
    line: int
    last: int
    section_end: int
    children: list[Heading] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """The `---` block at the top, its lines `start`..`end`, and its top-level keys with their lines."""

    start: int
    end: int
    keys: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class Outline:
    headings: list[Heading]
    front_matter: FrontMatter | None
    folds: list[Fold]


def outline(lines: Sequence[str]) -> Outline:
    """The outline of the note whose lines (without their ends) are `lines`."""
    shown = list(lines[:MAX_OUTLINE_LINES])
    tokens = _PARSER.parse("\n".join(shown))
    flat: list[Heading] = []
    front: FrontMatter | None = None
    folds: list[Fold] = []
    for index, token in enumerate(tokens):
        if not token.map:
            continue
        start, stop = token.map
        last = _last_text_line(shown, start, stop - 1)
        kind = token.type
        if kind == "front_matter":
            keys = tuple(
                (m.group(1), number) for number in range(start + 1, stop - 1) if (m := _KEY.match(shown[number]))
            )
            front = FrontMatter(start, stop - 1, keys)
            folds.append(Fold(start, stop - 1, FoldKind.FRONT_MATTER))
        elif kind == "heading_open":
            text = heading_text(tokens[index + 1].content)
            if text:
                flat.append(Heading(int(token.tag[1]), text, start, stop - 1, stop - 1))
        elif kind in ("fence", "code_block"):
            folds.append(Fold(start, last, FoldKind.CODE))
        elif kind in ("bullet_list_open", "ordered_list_open", "list_item_open"):
            folds.append(Fold(start, last, FoldKind.LIST))
        elif kind == "blockquote_open":
            folds.append(Fold(start, last, FoldKind.QUOTE))
        elif kind == "html_block" and token.content.lstrip().startswith("<!--"):
            folds.append(Fold(start, last, FoldKind.COMMENT))
    roots = _nest(flat, shown)
    folds.extend(Fold(h.line, h.section_end, FoldKind.SECTION) for h in flat)
    return Outline(roots, front, _distinct(folds))


def _last_text_line(lines: list[str], first: int, last: int) -> int:
    """`last`, moved up over blank lines (a block's map runs over the blank lines after it)."""
    while last > first and not lines[last].strip():
        last -= 1
    return last


def _nest(flat: list[Heading], lines: list[str]) -> list[Heading]:
    """Headings as a tree by level; each section ends before the next heading of its level or above."""
    roots: list[Heading] = []
    stack: list[Heading] = []

    def close(heading: Heading, before: int) -> None:
        heading.section_end = max(heading.last, _last_text_line(lines, heading.last, before - 1))

    for heading in flat:
        while stack and stack[-1].level >= heading.level:
            close(stack.pop(), heading.line)
        (stack[-1].children if stack else roots).append(heading)
        stack.append(heading)
    for heading in stack:
        close(heading, len(lines))
    return roots


def _distinct(folds: list[Fold]) -> list[Fold]:
    """One fold per start line, the longest (a list and its first item start on one line), in order;
    a fold of one line is none."""
    longest: dict[int, Fold] = {}
    for fold in folds:
        if fold.end > fold.start and (fold.start not in longest or fold.end > longest[fold.start].end):
            longest[fold.start] = fold
    return [longest[start] for start in sorted(longest)]
