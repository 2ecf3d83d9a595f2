"""Markdown block structure from a CommonMark parser (markdown-it-py), as line ranges.

Only the block level is parsed for the whole note: headings, fenced and indented code, lists,
block quotes, HTML blocks and paragraphs come from the tokens' `map` line ranges, so a
` ```python ` line inside a fence never closes it and `- item` followed by `---` is a list and
a thematic break. Inline parsing runs on heading text only (for a plain-text breadcrumb).

Containers are split where a chunk boundary reads well: each top-level list item is a block of
its own. Headings inside a list or a block quote stay part of that block; only top-level
headings start sections. Lines no token covers (link reference definitions) become blocks too,
so no text of a note is lost; thematic breaks and blank lines carry no text and are dropped.
Tables are read as paragraphs (same lines; a table token per cell cost 1.4 GB on a 2 MB table).

Memory: markdown-it holds every token of what it parses (~400 bytes each; a 2 MB list of
one-word items is 2.5 million tokens, ~1 GB, and Python's GC made it take minutes). A long note
is therefore parsed in windows of `WINDOW_LINES` lines: the last top-level block (or list item)
of a window may be cut, so the next window starts again at its first line; blocks before it are
closed and final. A block longer than a window grows the window while it stays cheap (a huge
fence or paragraph is one token); past `MAX_WINDOW_TOKENS` tokens the window is cut where it
ends, the one place where a pathological note may be read differently from the spec.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

#: markdown-it's nesting guard: deeper, the rest of the window is read into the deepest block.
#: Kept at its default: each level re-reads the rest of a line (`- - - …` on one 200 KB line:
#: 1.3 s at 20, 14 s at 100).
MAX_NESTING = 20


def _parser(front_matter: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING})
    # Block structure only: inline parsing of every paragraph costs time and memory for
    # nothing we index (tags and links are found on the raw text, outside code).
    md.disable(["inline", "text_join"])
    if front_matter:
        md.use(front_matter_plugin)
    return md


#: lines parsed at once; each window costs at most a few tokens per line.
WINDOW_LINES = 2000
#: a block that keeps a window from being split grows it only while it holds fewer tokens.
MAX_WINDOW_TOKENS = 50_000
#: characters that may carry inline markup; a heading without any is its own plain text.
_INLINE_MARKUP = frozenset("\\`*_[]<>&!~")

_BLOCKS = _parser(front_matter=True)
_BLOCKS_NO_FRONT_MATTER = _parser(front_matter=False)
_INLINE = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING})

#: block tokens at the top level that open a multi-line container (closed by a `_close` token).
_CONTAINERS = ("bullet_list_open", "ordered_list_open", "blockquote_open", "paragraph_open")


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
    #: lines before this one were parsed (all of them unless `max_lines` stopped it).
    parsed_lines: int


def line_runs(start: int, stop: int, kept: Callable[[int], bool]) -> list[SourceBlock]:
    """One block per run of consecutive line numbers in [start, stop) that `kept` keeps."""
    out: list[SourceBlock] = []
    run_start: int | None = None
    for number in range(start, stop):
        if not kept(number):
            if run_start is not None:
                out.append(SourceBlock(run_start, number - 1))
                run_start = None
        elif run_start is None:
            run_start = number
    if run_start is not None:
        out.append(SourceBlock(run_start, stop - 1))
    return out


def heading_text(source: str) -> str:
    """Plain text of a heading's inline markdown: emphasis, code and link markup removed."""
    if _INLINE_MARKUP.isdisjoint(source):
        return " ".join(source.split())
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


def parse_markdown(lines: Sequence[str], front_matter: bool = True, max_lines: int | None = None) -> MarkdownStructure:
    """Block structure of the note whose `\\n`-split lines are `lines`, window by window.

    With `max_lines`, parsing stops at the first block boundary at or before that line
    (`MarkdownStructure.parsed_lines`); the caller reads the rest some cheaper way.
    """
    builder = _Builder(lines)
    limit = len(lines) if max_lines is None else min(len(lines), max_lines)
    start = 0
    size = WINDOW_LINES
    while start < limit:
        stop = min(start + size, limit)
        parser = _BLOCKS if front_matter and start == 0 else _BLOCKS_NO_FRONT_MATTER
        tokens = parser.parse("\n".join(lines[start:stop]))
        cut = stop
        if stop < len(lines):  # the note goes on: the window's last block may be cut short
            restart = _restart(tokens)
            if not restart and stop < limit and len(tokens) < MAX_WINDOW_TOKENS:
                size *= 2  # one block fills the window: read further before splitting it
                continue
            cut = start + restart if restart else stop
        builder.add_window(tokens, start, cut)
        start = cut
        size = WINDOW_LINES
        if stop == limit:
            break
    return builder.finish(parsed_lines=start)


def _restart(tokens: list[Token]) -> int:
    """Window line where the next window starts: the last top-level block or list item (0: none)."""
    for token in reversed(tokens):
        top_level = token.level == 0 or (token.level == 1 and token.type == "list_item_open")
        if top_level and token.map and token.map[0] > 0:
            return token.map[0]
    return 0


class _Builder:
    """Collects top-level blocks from a token stream, remembering which lines they own."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.blocks: list[SourceBlock] = []
        self.covered = bytearray(len(lines) + 1)  # 1 where a token (or a dropped break) owns the line
        self.code: set[int] = set()
        self.front_matter: str | None = None
        self.body_start = 0
        self.offset = 0  # line of the window's first line in the note
        self.limit = 0  # blocks that start at or after this line belong to the next window

    def add_window(self, tokens: list[Token], offset: int, limit: int) -> None:
        """Add the blocks of one window (parsed from line `offset`) that start before `limit`."""
        self.offset, self.limit = offset, limit
        index = 0
        while index < len(tokens):
            index = self._take(tokens, index)

    def _take(self, tokens: list[Token], index: int) -> int:
        """Handle the token at `index`; return the index of the next one to look at."""
        token = tokens[index]
        if not token.map or token.map[0] + self.offset >= self.limit:
            return index + 1
        start, stop = token.map[0] + self.offset, token.map[1] + self.offset
        if token.type in ("fence", "code_block"):
            self.code.update(range(start, stop))
        if token.level != 0:
            return index + 1
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
            if token.map and token.type in ("fence", "code_block"):
                self.code.update(range(token.map[0] + self.offset, token.map[1] + self.offset))
            if token.level == 0 and token.type == close:
                return index + 1
            if token.level == 1 and token.type == "list_item_open" and token.map:
                start = token.map[0] + self.offset
                if start < self.limit:
                    self._add(SourceBlock(start, min(token.map[1] + self.offset, self.limit) - 1))
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

    def finish(self, parsed_lines: int) -> MarkdownStructure:
        blocks = self.blocks + self._uncovered(parsed_lines)
        blocks.sort(key=lambda b: b.start)
        return MarkdownStructure(blocks, self.front_matter, self.body_start, frozenset(self.code), parsed_lines)

    def _uncovered(self, parsed_lines: int) -> list[SourceBlock]:
        """Runs of non-blank lines that no token owns (link reference definitions)."""
        covered, lines = self.covered, self.lines
        return line_runs(self.body_start, parsed_lines, lambda number: not covered[number] and bool(lines[number].strip()))
