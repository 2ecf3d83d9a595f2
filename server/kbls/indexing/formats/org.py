"""Org-mode structure: `*` headings as sections, `#+TITLE:` as the title, `#+FILETAGS:` and
heading `:tags:` as the note's tags.

Keyword lines (`#+…`), comments and property drawers are settings, not prose: they are left out
of the blocks; `#+BEGIN_SRC`…`#+END_SRC` (any `#+BEGIN_`) is one block kept whole.
"""

from __future__ import annotations

import re

from kbls.indexing.markdown import SourceBlock

_HEADING = re.compile(r"^(\*+)[ \t]+(.*?)[ \t]*$")
#: a heading's trailing `:tag1:tag2:`
_HEADING_TAGS = re.compile(r"[ \t]+(:(?:[\w@#%]+:)+)$")
#: TODO keywords and a priority cookie at the start of a heading are state, not its name.
_TODO = re.compile(r"^(?:(?:TODO|DONE|NEXT|WAITING|CANCELLED|CANCELED)[ \t]+)?(?:\[#[A-Za-z0-9]\][ \t]+)?")
_KEYWORD = re.compile(r"^[ \t]*#\+(\w+):[ \t]*(.*)$")
_BEGIN = re.compile(r"^[ \t]*#\+begin_(\w+)", re.IGNORECASE)
_DRAWER = re.compile(r"^[ \t]*:[\w-]+:[ \t]*$")
_DRAWER_END = re.compile(r"^[ \t]*:end:[ \t]*$", re.IGNORECASE)


def _tags(value: str) -> list[str]:
    return [t for t in re.split(r"[:\s]+", value) if t]


def org_structure(lines: list[str], stem: str) -> tuple[list[SourceBlock], dict[str, object]]:
    """(blocks, metadata {"title", "tags"}) of an org file's lines. The title is `#+TITLE:`, else
    the file name `stem`: a first `*` heading is a section of the file, not its name."""
    blocks: list[SourceBlock] = []
    title = ""
    tags: list[str] = []
    run_start: int | None = None

    def close(at: int) -> None:
        nonlocal run_start
        if run_start is not None:
            blocks.append(SourceBlock(run_start, at - 1))
            run_start = None

    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        heading = _HEADING.match(line)
        begin = _BEGIN.match(line)
        keyword = _KEYWORD.match(line)
        if heading:
            close(i)
            text = heading.group(2)
            found = _HEADING_TAGS.search(text)
            if found:
                tags += _tags(found.group(1))
                text = text[: found.start()]
            name = _TODO.sub("", text).strip() or text.strip()
            blocks.append(SourceBlock(i, i, heading_level=min(len(heading.group(1)), 6), heading_text=name))
        elif begin:
            close(i)
            end = re.compile(rf"^[ \t]*#\+end_{re.escape(begin.group(1))}\b", re.IGNORECASE)
            last = next((j for j in range(i + 1, n) if end.match(lines[j])), n - 1)
            blocks.append(SourceBlock(i, last, is_code=begin.group(1).lower() in ("src", "example")))
            i = last
        elif keyword:
            close(i)
            key, value = keyword.group(1).lower(), keyword.group(2).strip()
            if key == "title" and not title:
                title = value
            elif key == "filetags":
                tags += _tags(value)
        elif _DRAWER.match(line) and line.strip().lower() != ":end:":
            close(i)
            i = next((j for j in range(i + 1, n) if _DRAWER_END.match(lines[j])), i)
        elif not line.strip() or line.lstrip().startswith("# ") or line.strip() == "#":
            close(i)  # a blank line or a comment
        elif run_start is None:
            run_start = i
        i += 1
    close(n)
    return blocks, {"title": title or stem, "tags": tags}
