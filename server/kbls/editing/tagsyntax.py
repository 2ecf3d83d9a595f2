"""Tags in the text of a note being edited: the tag being typed after `#` in the body, or as an
item of the front matter's `tags:` (`tags: [a, b]`, `tags: a, b`, or a `- item` list under it).

An inline tag is read as the indexer reads one (`kbls.indexing.parse`): `#` not after a word
character, `#`, `&`, `/` or a bracket, then letters, digits, `_`, `-` and `/` (`#parent/child`);
none in code or in a heading's opening `#`s. Positions are Python string indices.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbls.links.syntax import FENCE, MAX_LINE_CHARS

#: the front matter is looked for this far down (as `kbls.indexing.parse` reads it).
MAX_FRONT_MATTER_LINES = 2000
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


def front_matter_end(lines: list[str]) -> int:
    """The line of the front matter's closing `---` (0 when there is none)."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    return next((n for n in range(1, min(len(lines), MAX_FRONT_MATTER_LINES)) if lines[n].rstrip() in ("---", "...")), 0)


def tag_typing(lines: list[str], line: int, character: int) -> TagTyping | None:
    """The tag the cursor is typing, or None."""
    if not 0 <= line < len(lines) or len(lines[line]) > MAX_LINE_CHARS:
        return None
    text = lines[line]
    before = text[:character]
    rest = _TAG_REST.match(text, character)
    end = rest.end() if rest else character
    closing = front_matter_end(lines)
    if closing and line < closing:
        return _front_matter_item(lines, line, character, end) if line > 0 else None
    if before.count("`") % 2 or _in_fence(lines, line, closing):
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


def _in_fence(lines: list[str], line: int, closing: int) -> bool:
    fence: str | None = None
    for number in range(closing + 1 if closing else 0, line + 1):
        match = FENCE.match(lines[number])
        if fence is None and match:
            fence = match.group(1)[0] * len(match.group(1))
            if number == line:
                return True
        elif fence is not None:
            if number == line:
                return True
            if match and match.group(1).startswith(fence) and not lines[number].strip()[len(match.group(1)) :].strip():
                fence = None
    return False
