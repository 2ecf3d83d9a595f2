"""Markdown block structure from a CommonMark parser (markdown-it-py), as line ranges.

Only the block level is parsed for the whole note: headings, fenced and indented code, lists,
block quotes, tables, HTML blocks and paragraphs come from the tokens' `map` line ranges, so a
` ```python ` line inside a fence never closes it and `- item` followed by `---` is a list and
a thematic break. Inline parsing runs on heading text only (for a plain-text breadcrumb).

Containers are split where a chunk boundary reads well: each top-level list item is a block of
its own. Headings inside a list or a block quote stay part of that block; only top-level
headings start sections. Lines no token covers (link reference definitions) become blocks too,
so no text of a note is lost; thematic breaks and blank lines carry no text and are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

#: markdown-it's own nesting guard: deeper block quotes and lists are left as paragraphs.
MAX_NESTING = 20


def _parser(front_matter: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING}).enable("table")
    # Block structure only: inline parsing of every paragraph costs time and memory for
    # nothing we index (tags and links are found on the raw text, outside code).
    md.disable(["inline", "text_join"])
    if front_matter:
        md.use(front_matter_plugin)
    return md


_BLOCKS = _parser(front_matter=True)
_BLOCKS_NO_FRONT_MATTER = _parser(front_matter=False)
_INLINE = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING})

#: block tokens at the top level that open a multi-line container (closed by a `_close` token).
_CONTAINERS = ("bullet_list_open", "ordered_list_open", "blockquote_open", "table_open", "paragraph_open")


@dataclass(frozen=True)
class SourceBlock:
    """One top-level block of a note: lines `start`..`end` (0-based, inclusive)."""

    start: int
    end: int
    #: 1-6 for a top-level heading, 0 otherwise.
    heading_level: int = 0
    #: the heading's text as a reader sees it (markup and closing `#`s removed).
    heading_text: str = ""
    #: a fenced or indented code block: no tags or links are taken from it.
    is_code: bool = False


@dataclass(frozen=True)
class MarkdownStructure:
    blocks: list[SourceBlock]
    #: raw YAML between the `---` lines, or None without front matter.
    front_matter: str | None
    #: first line after the front matter (0 without).
    body_start: int
    #: lines of code (fences and indented code at any depth): never read for tags or links.
    code_lines: frozenset[int]


def heading_text(source: str) -> str:
    """Plain text of a heading's inline markdown: emphasis, code and link markup removed."""
    if not source:
        return ""
    parts: list[str] = []
    for token in _INLINE.parseInline(source):
        for child in token.children or ():
            if child.type in ("text", "code_inline"):
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append(" ")
            elif child.type == "image":
                parts.append(child.content)
    return " ".join("".join(parts).split())


def parse_markdown(text: str, lines: Sequence[str], front_matter: bool = True) -> MarkdownStructure:
    """Block structure of `text` (whose `\\n`-split lines are `lines`)."""
    tokens = (_BLOCKS if front_matter else _BLOCKS_NO_FRONT_MATTER).parse(text)
    builder = _Builder(lines)
    index = 0
    while index < len(tokens):
        index = builder.take(tokens, index)
    return builder.finish()


class _Builder:
    """Collects top-level blocks from a token stream, remembering which lines they own."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.blocks: list[SourceBlock] = []
        self.covered = bytearray(len(lines) + 1)  # 1 where a token (or a dropped break) owns the line
        self.code: set[int] = set()
        self.front_matter: str | None = None
        self.body_start = 0

    def take(self, tokens: list[Token], index: int) -> int:
        """Handle the token at `index`; return the index of the next one to look at."""
        token = tokens[index]
        if token.type in ("fence", "code_block") and token.map:
            self.code.update(range(token.map[0], token.map[1]))
        if token.level != 0 or not token.map:
            return index + 1
        start, stop = token.map
        kind = token.type
        if kind == "front_matter":
            self.front_matter, self.body_start = token.content, stop
            self._cover(start, stop)
        elif kind == "heading_open":
            text = heading_text(tokens[index + 1].content)
            self._add(SourceBlock(start, stop - 1, heading_level=int(token.tag[1]), heading_text=text))
        elif kind in ("fence", "code_block"):
            self._add(SourceBlock(start, stop - 1, is_code=True))
        elif kind == "hr":
            self._cover(start, stop)
        elif kind in ("bullet_list_open", "ordered_list_open"):
            return self._list_items(tokens, index)
        elif kind in _CONTAINERS or kind == "html_block":
            self._add(SourceBlock(start, stop - 1))
        return index + 1

    def _list_items(self, tokens: list[Token], index: int) -> int:
        """Add each item of the top-level list opened at `index`; return the index after it."""
        close = tokens[index].type.replace("_open", "_close")
        index += 1
        while index < len(tokens):
            token = tokens[index]
            if token.type in ("fence", "code_block") and token.map:
                self.code.update(range(token.map[0], token.map[1]))
            if token.level == 0 and token.type == close:
                return index + 1
            if token.level == 1 and token.type == "list_item_open" and token.map:
                self._add(SourceBlock(token.map[0], token.map[1] - 1))
            index += 1
        return index

    def _cover(self, start: int, stop: int) -> None:
        self.covered[start:stop] = b"\x01" * (stop - start)

    def _add(self, block: SourceBlock) -> None:
        self._cover(block.start, block.end + 1)
        end = block.end
        while end > block.start and not self.lines[end].strip():
            end -= 1  # a list item's map runs over the blank lines after it
        self.blocks.append(block if end == block.end else replace(block, end=end))

    def finish(self) -> MarkdownStructure:
        blocks = self.blocks + self._uncovered()
        blocks.sort(key=lambda b: b.start)
        return MarkdownStructure(blocks, self.front_matter, self.body_start, frozenset(self.code))

    def _uncovered(self) -> list[SourceBlock]:
        """Runs of non-blank lines that no token owns (link reference definitions)."""
        out: list[SourceBlock] = []
        run_start: int | None = None
        lines = self.lines
        for number in range(self.body_start, len(lines)):
            if self.covered[number] or not lines[number].strip():
                if run_start is not None:
                    out.append(SourceBlock(run_start, number - 1))
                    run_start = None
            elif run_start is None:
                run_start = number
        if run_start is not None:
            out.append(SourceBlock(run_start, len(lines) - 1))
        return out
