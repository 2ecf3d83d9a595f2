"""Rewriting one part of a written link, a title or a heading: pure text functions that answer
an `Edit` (a line and columns in code points of the text given) or None when nothing changes.

Only the part that names what was renamed changes: a wiki link's name or anchor, a markdown
link's path (relative to the linking note, percent-encoded, or inside `<…>` when it was written
so; its `#fragment`, `?query` and title kept) or fragment; a label is never touched.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import quote

from kbls.indexing.parse import MAX_FRONTMATTER_LINES
from kbls.links.forms import MARKDOWN_LINK, WIKI_LINK
from kbls.links.headings import setext_underline
from kbls.links.syntax import ATX_HEADING, heading_slug, markdown_path
from kbls.storage.records import LinkSpan

_FRONT_TITLE = re.compile(r"^title\s*:[ \t]*(.*?)\s*$")
_CLOSING_HASHES = re.compile(r"\s+#+\s*$")
#: a YAML plain scalar cannot start with these, nor hold `: ` or ` #`: such a title is quoted.
_YAML_SPECIAL_START = tuple("!&*-?{}[],#|>@`\"'%:")
_ANGLE_ESCAPES = re.compile(r"[<>\\]")


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace from column `start` of `line` to column `end` of `end_line` (code points; None:
    the same line) by `text`."""

    line: int
    start: int
    end: int
    text: str
    end_line: int | None = None

    @property
    def last_line(self) -> int:
        return self.line if self.end_line is None else self.end_line


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """(start, end) of `text[start:end]` without its surrounding spaces."""
    part = text[start:end]
    lead = len(part) - len(part.lstrip())
    return start + lead, start + lead + len(part.strip())


def wiki_name_edit(line: str, link: LinkSpan, name: str) -> Edit | None:
    """`[[old#h|l]]` -> `[[name#h|l]]`."""
    where = link.span
    match = WIKI_LINK.match(line, where.start, where.end)
    if match is None:
        return None
    start, end = _trimmed(line, match.start(1), match.end(1))
    return None if line[start:end] == name else Edit(where.line, start, end, name)


def wiki_heading_edit(line: str, link: LinkSpan, heading: str) -> Edit | None:
    """`[[n#old|l]]` -> `[[n#heading|l]]`."""
    where = link.span
    match = WIKI_LINK.match(line, where.start, where.end)
    if match is None or match.group(2) is None:
        return None
    start, end = _trimmed(line, match.start(2), match.end(2))
    return None if line[start:end] == heading else Edit(where.line, start, end, heading)


def _destination(line: str, link: LinkSpan) -> tuple[int, int, bool] | None:
    """(start, end, angled) of a markdown link's destination as written."""
    where = link.span
    match = MARKDOWN_LINK.match(line, where.start, where.end)
    if match is None:
        return None
    group = 2 if match.group(2) is not None else 3
    return match.start(group), match.end(group), group == 2


def markdown_path_edit(line: str, link: LinkSpan, source: str, target: str, keep_extension: bool) -> Edit | None:
    """The path of a markdown link in the note at `source` made to lead to `target` (both
    root-relative): relative to `source`'s folder (or from the root, `/…`, when it was written
    so), without `.md` when it was written without, percent-encoded or in `<…>` as written."""
    found = _destination(line, link)
    if found is None:
        return None
    start, end, angled = found
    raw = line[start:end]
    cut = min((at for at in (raw.find("#"), raw.find("?")) if at >= 0), default=len(raw))
    old_path = raw[:cut]  # the `#fragment` or `?query` after it stays
    written = target if keep_extension or not target.endswith(".md") else target[: -len(".md")]
    if old_path.startswith("/"):
        new_path = "/" + (_ANGLE_ESCAPES.sub(r"\\\g<0>", written) if angled else quote(written, safe="/._-~"))
    else:
        new_path = markdown_path(source, written, angled)
        if old_path.startswith("./") and not new_path.startswith("."):
            new_path = "./" + new_path
    return None if new_path == old_path else Edit(link.span.line, start, start + len(old_path), new_path)


def markdown_fragment_edit(line: str, link: LinkSpan, fragment: str) -> Edit | None:
    """`[x](p.md#old)` -> `[x](p.md#fragment)`."""
    found = _destination(line, link)
    if found is None:
        return None
    start, end, angled = found
    raw = line[start:end]
    at = raw.find("#")
    if at < 0:
        return None
    written = fragment if angled else quote(fragment, safe="-_.~")
    begin = start + at + 1
    return None if raw[at + 1 :] == written else Edit(link.span.line, begin, end, written)


def anchor_for(written: str, old_text: str, new_text: str) -> str:
    """An anchor naming the renamed heading in the form the old one was written in: the heading's
    text, or its GitHub slug (with the `-1` of a repeated heading kept)."""
    if written.strip().lower() == old_text.strip().lower():
        return new_text
    old_slug = heading_slug(old_text)
    suffix = written[len(old_slug) :] if written.startswith(old_slug) else ""
    return heading_slug(new_text) + (suffix if re.fullmatch(r"-\d+", suffix) else "")


def heading_text_edit(lines: list[str], line: int, text: str) -> Edit | None:
    """The text of the heading at `line` (ATX, its `#`s and closing `#`s kept; or setext) -> `text`."""
    row = lines[line]
    opening = ATX_HEADING.match(row)
    if opening is not None:
        body_end = len(row.rstrip())
        closing = _CLOSING_HASHES.search(row, opening.end())
        if closing is not None:
            body_end = closing.start()
        start, end = _trimmed(row, opening.end(), body_end)
        return None if row[start:end] == text else Edit(line, start, end, text)
    # A setext heading's text may run over several lines before its underline: all are replaced.
    underline = setext_underline(lines, line)
    last = line if underline is None else underline - 1
    start = _trimmed(row, 0, len(row))[0]
    end = _trimmed(lines[last], 0, len(lines[last]))[1]
    if last == line:
        return None if row[start:end] == text else Edit(line, start, end, text)
    return Edit(line, start, end, text, end_line=last)


def title_edit(lines: list[str], title: str, new_title: str) -> Edit | None:
    """Where the note's title is written (front matter `title:`, else its first H1 reading
    `title`) set to `new_title`; None when neither writes it (a title from the file name)."""
    if lines and lines[0].rstrip() == "---":
        for number in range(1, min(len(lines), MAX_FRONTMATTER_LINES)):
            if lines[number].rstrip() in ("---", "..."):
                break
            match = _FRONT_TITLE.match(lines[number])
            if match is not None and match.group(1):
                return _front_title_edit(lines[number], number, match, new_title)
    for number, row in enumerate(lines):
        opening = ATX_HEADING.match(row)
        if opening is not None and row[opening.start() :].lstrip().startswith("# "):
            edit = heading_text_edit(lines, number, new_title)
            current = lines[number][edit.start : edit.end] if edit is not None else new_title
            if current.strip() == title.strip():
                return edit
    return None


def title_line(lines: list[str], title: str) -> int | None:
    """The line the note's title is written on (front matter or H1); None for a title taken
    from the file name, which a file rename changes."""
    edit = title_edit(lines, title, title + "\0")  # a new title never equal to the old one
    return edit.line if edit is not None else None


def _front_title_edit(row: str, number: int, match: re.Match[str], new_title: str) -> Edit:
    start, end = match.start(1), match.end(1)
    value = row[start:end]
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        quote_mark = value[0]
        inner = new_title.replace("'", "''") if quote_mark == "'" else new_title.replace("\\", "\\\\").replace('"', '\\"')
        return Edit(number, start + 1, end - 1, inner)
    needs_quotes = new_title.startswith(_YAML_SPECIAL_START) or ": " in new_title or " #" in new_title
    text = '"' + new_title.replace("\\", "\\\\").replace('"', '\\"') + '"' if needs_quotes else new_title
    return Edit(number, start, end, text)


def path_moved(path: str, moves: list[tuple[str, str]]) -> str | None:
    """Where `path` goes under `moves` ((old, new) of files or folders); None if it stays."""
    for old, new in moves:
        if path == old:
            return new
        if path.startswith(old.rstrip("/") + "/"):
            return posixpath.join(new, path[len(old.rstrip("/")) + 1 :])
    return None
