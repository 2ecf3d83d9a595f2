"""A note's outline and folds: headings nested by level, each over its section, and the front
matter with its keys, from the line scan every link feature reads headings with
(`kbls.links.headings`: ATX and setext, none in fences nor front matter), so `documentSymbol`
costs a scan of the lines; and the ranges an editor folds (sections and front matter from that
scan; fenced and indented code, lists and their items, block quotes, HTML comments from the
CommonMark block parse, markdown-it-py, which only knows where a list or a quote ends).

The parse is block level only (no inline rules), as the indexer's (`kbls.indexing.markdown`).
It costs ~25-50 µs a line, so the LSP layer parses a document once per version, for its folds
only, and keeps the result; a note longer than `MAX_OUTLINE_LINES` is folded up to there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from kbls.indexing.markdown import MAX_NESTING, heading_text
from kbls.links.headings import front_matter_close, headings, setext_underline
from kbls.links.syntax import heading_text as atx_text

#: lines of a note that are outlined (markdown-it holds ~400 bytes per token: bounded memory).
MAX_OUTLINE_LINES = 20_000
#: a setext heading's underline: `=` makes a level 1 heading, `-` a level 2 one.
_UNDERLINE = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_ATX_OPENING = re.compile(r"^\s{0,3}(#{1,6})")
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
class Symbols:
    """What `documentSymbol` answers: the headings as a tree and the front matter."""

    headings: list[Heading]
    front_matter: FrontMatter | None


@dataclass(frozen=True, slots=True)
class Outline:
    headings: list[Heading]
    front_matter: FrontMatter | None
    folds: list[Fold]


def symbols(lines: Sequence[str], found: Iterable[tuple[int, str]] | None = None) -> Symbols:
    """The headings and front matter of the note whose lines (without their ends) are `lines`;
    `found` its headings read already (`kbls.links.headings.headings`), else they are read."""
    shown = list(lines)
    flat: list[Heading] = []
    for number, text in headings(shown) if found is None else found:
        heading = _heading(shown, number, text)
        if heading is not None:
            flat.append(heading)
    return Symbols(_nest(flat, shown), _front_matter(shown))


def outline(lines: Sequence[str], found: Symbols | None = None) -> Outline:
    """The outline and folds of the note whose lines (without their ends) are `lines` (`found`
    its `symbols` made already)."""
    shown = list(lines[:MAX_OUTLINE_LINES])
    made = symbols(lines) if found is None else found
    tokens = _PARSER.parse("\n".join(shown))
    folds: list[Fold] = []
    if made.front_matter is not None:
        folds.append(Fold(made.front_matter.start, made.front_matter.end, FoldKind.FRONT_MATTER))
    for token in tokens:
        if not token.map:
            continue
        start, stop = token.map
        last = _last_text_line(shown, start, stop - 1)
        kind = token.type
        if kind in ("fence", "code_block"):
            folds.append(Fold(start, last, FoldKind.CODE))
        elif kind in ("bullet_list_open", "ordered_list_open", "list_item_open"):
            folds.append(Fold(start, last, FoldKind.LIST))
        elif kind == "blockquote_open":
            folds.append(Fold(start, last, FoldKind.QUOTE))
        elif kind == "html_block" and token.content.lstrip().startswith("<!--"):
            folds.append(Fold(start, last, FoldKind.COMMENT))
    folds.extend(Fold(h.line, h.section_end, FoldKind.SECTION) for h in _walk(made.headings) if h.line < len(shown))
    return Outline(made.headings, made.front_matter, _distinct(folds))


def _heading(lines: list[str], number: int, text: str) -> Heading | None:
    """The heading the line scan found at `number` with its level, its plain text (inline markup
    removed, as the indexer reads it) and its last line (a setext heading's underline)."""
    plain = heading_text(text)
    if not plain:
        return None
    if atx_text(lines[number]) is not None:
        opening = _ATX_OPENING.match(lines[number])
        level = len(opening.group(1)) if opening is not None else 1
        return Heading(level, plain, number, number, number)
    last = setext_underline(lines, number)
    last = number + 1 if last is None else last
    underline = _UNDERLINE.match(lines[last]) if last < len(lines) else None
    level = 1 if underline is not None and underline.group(1).startswith("=") else 2
    return Heading(level, plain, number, last, last)


def _front_matter(lines: list[str]) -> FrontMatter | None:
    """The front matter as the indexer and the heading scan read it, with its top-level keys."""
    closing = front_matter_close(lines)
    if not closing:
        return None
    keys = tuple((m.group(1), number) for number in range(1, closing) if (m := _KEY.match(lines[number])))
    return FrontMatter(0, closing, keys)


def _walk(roots: list[Heading]) -> Iterable[Heading]:
    for heading in roots:
        yield heading
        yield from _walk(heading.children)


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
