"""Tags in the text of a note being edited: the tag being typed after `#` in the body, or as an
item of the front matter's `tags:` (`tags: [a, b]`, `tags: a, b`, or a `- item` list under it).

An inline tag is read as the indexer reads one (`kbls.indexing.parse`): `#` not after a word
character, `#`, `&`, `/` or a bracket, then letters, digits, `_`, `-` and `/` (`#parent/child`);
none in code or in a heading's opening `#`s. Positions are Python string indices.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbls.links.headings import body_start, front_matter_close
from kbls.links.syntax import MAX_LINE_CHARS, fenced_lines

_TYPING_TAG = re.compile(r"(?<![\w#&/\]\[(])#([\w/\-\u00c0-\uffff]*)$")
_TAG_KEY = re.compile(r"^(tags?)\s*:(.*)$")
_TOP_KEY = re.compile(r"^[^\s#\-][^:]*:")
_ITEM_TYPED = re.compile(r"([\w/\-\u00c0-\uffff]*)$")
_TAG_REST = re.compile(r"[\w/\-\u00c0-\uffff]*")


@dataclass(frozen=True, slots=True)
class TagTyping:
    """A tag being typed: what was typed of it and the text a completion replaces (on `line`)."""

    line: int
    start: int
    end: int
    typed: str
    #: typed after `#` in the body (the name is inserted without it); else a front-matter item.
    inline: bool


def tag_typing(lines: list[str], line: int, character: int) -> TagTyping | None:
    """The tag the cursor is typing, or None."""
    if not 0 <= line < len(lines) or len(lines[line]) > MAX_LINE_CHARS:
        return None
    text = lines[line]
    before = text[:character]
    rest = _TAG_REST.match(text, character)
    end = rest.end() if rest else character
    closing = front_matter_close(lines)
    if closing and line < closing:
        return _front_matter_item(lines, line, character, end) if line > 0 else None
    start = body_start(lines)
    if before.count("`") % 2 or line - start in fenced_lines(lines[start : line + 1]):
        return None
    typed = _TYPING_TAG.search(before)
    if typed is None:
        return None
    if not typed.group(1) and not before[: typed.start()].strip():
        return None  # a `#` opening the line starts a heading more likely than a tag
    return TagTyping(line, typed.start(1), end, typed.group(1), inline=True)


def _front_matter_item(lines: list[str], line: int, character: int, end: int) -> TagTyping | None:
    """An item of `tags:` (on its line, or a `- item` under it) being typed."""
    text = lines[line]
    own = _TAG_KEY.match(text)
    if own is None:
        if not text.lstrip().startswith("-"):
            return None
        key = next((lines[n] for n in range(line - 1, 0, -1) if _TOP_KEY.match(lines[n])), "")
        if _TAG_KEY.match(key) is None:
            return None
        start = text.index("-") + 1
    else:
        start = own.start(2)
    if character < start:
        return None
    typed = _ITEM_TYPED.search(text[start:character])
    word = typed.group(1) if typed else ""
    return TagTyping(line, character - len(word), end, word.lstrip("#"), inline=False)
