"""Where a markdown note writes its links and tags, for the index (`NoteRecord.spans`).

Links are read by the editor's reader (`kbls.links.syntax.links_in`, what definition
and document links use) over the note's lines with CommonMark's code blocks blanked, so a link
in an indented or nested fence is not one, as the indexer reads it. Inline tags are the
indexer's (`kbls.indexing.parse.INLINE_TAG`, outside code and headings); front-matter tags are
found in the `tags:` (or `tag:`) lines of the front matter: a flow list, a block list or a
string of tags, each kept only if the YAML parse read it as a tag.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from kbls.links.forms import MARKDOWN_LINK, WIKI_LINK, name_key
from kbls.links.syntax import LinkKind, LinkRef, links_in
from kbls.storage.records import LinkSpan, NoteSpans, Span, TagSpan

_CODE_SPAN = re.compile(r"`[^`\n]*`")
_FRONT_TAGS = re.compile(r"^(tags?)\s*:\s*(.*?)\s*$")
_FRONT_ITEM = re.compile(r"^\s*-\s+(.*?)\s*$")
_FRONT_TOKEN = re.compile(r"[^\s,\[\]'\"]+")


def utf16(line: str, column: int) -> int:
    """`column` (code points into `line`) in UTF-16 units."""
    before = line[:column]
    return column if before.isascii() else len(before.encode("utf-16-le", "surrogatepass")) // 2


def utf8(line: str, column: int) -> int:
    """`column` (code points into `line`) in UTF-8 bytes."""
    before = line[:column]
    return column if before.isascii() else len(before.encode("utf-8", "surrogatepass"))


def span(line_text: str, line: int, start: int, end: int) -> Span:
    """The span of `line_text[start:end]` (code points) on `line`, in every unit."""
    return Span(
        line, start, end, utf16(line_text, start), utf16(line_text, end), utf8(line_text, start), utf8(line_text, end)
    )


def link_key(source: str, kind: LinkKind, target: str) -> str | None:
    """What a link is looked up by (`LinkSpan.key`)."""
    from kbls.links.resolve import relative_target  # links imports the indexer's parse: not at import time

    if not target:
        return ""
    if kind == LinkKind.WIKI:
        return name_key(target)
    return relative_target(source, target)


def written_label(line_text: str, ref: LinkRef) -> str | None:
    """The label of the link at `ref` as written; None for a wiki link without one."""
    text = line_text[ref.start : ref.end]
    match = (WIKI_LINK if ref.kind == LinkKind.WIKI else MARKDOWN_LINK).match(text)
    if match is None:
        return None
    return match.group(3) if ref.kind == LinkKind.WIKI else match.group(1)


def link_spans(source: str, lines: Sequence[str]) -> list[LinkSpan]:
    """Every link of `lines` (code already blanked) with its key and label."""
    out = []
    for ref in links_in(list(lines)):
        text = lines[ref.line]
        out.append(LinkSpan(
            kind=ref.kind.value, target=ref.target, key=link_key(source, ref.kind, ref.target), heading=ref.heading,
            label=written_label(text, ref), span=span(text, ref.line, ref.start, ref.end),
        ))
    return out


def inline_tag_spans(lines: Sequence[str], numbers: Collection[int], pattern: re.Pattern[str]) -> list[TagSpan]:
    """The `#tags` of the lines `numbers` (inline code blanked)."""
    out = []
    for number in sorted(n for n in numbers if n < len(lines)):
        text = lines[number]
        free = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)
        for match in pattern.finditer(free):
            written = match.group(1)
            out.append(TagSpan(written.lower(), written, False, span(text, number, match.start(), match.end())))
    return out


def front_matter_tag_spans(lines: Sequence[str], front_lines: int, tags: Collection[str]) -> list[TagSpan]:
    """The tags written in the front matter's `tags:` key (lines 1..front_lines-2), those of
    `tags` (what the YAML parse read, lowercase) only."""
    out: list[TagSpan] = []
    number = 1
    while number < front_lines - 1:
        key = _FRONT_TAGS.match(lines[number])
        number += 1
        if key is None:
            continue
        if key.group(2):
            out.extend(_tokens(lines[number - 1], number - 1, key.start(2), key.group(2), tags))
            continue
        while number < front_lines - 1 and (item := _FRONT_ITEM.match(lines[number])):
            out.extend(_tokens(lines[number], number, item.start(1), item.group(1), tags))
            number += 1
    return out


def _tokens(text: str, line: int, offset: int, value: str, tags: Collection[str]) -> list[TagSpan]:
    out = []
    for match in _FRONT_TOKEN.finditer(value):
        start = offset + match.start()
        written = match.group(0)
        if written.startswith("#"):
            written, start = written[1:], start + 1
        if written and written.lower() in tags:
            out.append(TagSpan(written.lower(), written, True, span(text, line, start, start + len(written))))
    return out


def note_spans(
    source: str,
    lines: Sequence[str],
    *,
    code_lines: Collection[int],
    tag_lines: Collection[int],
    front_lines: int,
    front_tags: Collection[str],
    tag_pattern: re.Pattern[str],
) -> NoteSpans:
    """The links and tags of a markdown note. `code_lines` hold no link; `tag_lines` are the
    lines the indexer reads inline tags from; the first `front_lines` lines are front matter."""
    body = [
        "" if number < front_lines or number in code_lines else line for number, line in enumerate(lines)
    ]
    tags = front_matter_tag_spans(lines, front_lines, front_tags) + inline_tag_spans(lines, tag_lines, tag_pattern)
    return NoteSpans(tuple(link_spans(source, body)), tuple(tags))
