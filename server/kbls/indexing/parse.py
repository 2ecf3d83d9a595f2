"""Parse a note into metadata (frontmatter, tags, links) and heading-delimited blocks.

Markdown: YAML frontmatter (title, tags, aliases, type), ATX and setext headings, fenced code
blocks kept whole, inline `#tags`, `[[wiki links]]` and `[text](relative/links.md)`.
reStructuredText: underlined titles become headings. Plain text: paragraphs only.
Malformed frontmatter is reported in `ParsedNote.warning` and the body is still indexed.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from urllib.parse import unquote

import yaml

#: frontmatter larger than this is not parsed (a YAML bomb is cheap to write, costly to load).
MAX_FRONTMATTER_BYTES = 64 * 1024

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}[ \t]*$")
_TAG = re.compile(r"(?<![\w#&/\]\[(])#([A-Za-z_\u00c0-\uffff][\w/\-\u00c0-\uffff]*)")
# No `[` inside a link's parts: otherwise a line of `[[[[…` or `[](` repeated makes every
# start scan to the end of the line (quadratic: a 60 KB line took 45 s).
_WIKI = re.compile(r"\[\[([^\[\]\|#\n]+)(?:#[^\[\]\|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
_MDLINK = re.compile(r"\[[^\[\]\n]*\]\(\s*<?([^)\s>\[]+)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


@dataclass(frozen=True)
class Block:
    """A run of lines that is chunked as a unit where it fits (paragraph, code fence, heading)."""

    start_line: int  # 0-based, inclusive
    end_line: int  # 0-based, inclusive
    text: str
    is_heading: bool = False


@dataclass
class Section:
    """The lines under one heading, down to the next heading of any level."""

    headings: list[str]  # breadcrumb below the note title, e.g. ["Setup", "Linux"]
    blocks: list[Block] = field(default_factory=list)


@dataclass
class ParsedNote:
    title: str
    kind: str  # "md", "txt" or "rst"
    note_type: str | None = None
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    #: ("path", "dir/other.md") resolved against the root, or ("wiki", "target name").
    links: list[tuple[str, str]] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    warning: str | None = None
    #: the title is the file name (no frontmatter title, H1 or first line): not note content.
    title_from_name: bool = False


def kind_of(path: str) -> str:
    lower = path.lower()
    if lower.endswith((".md", ".markdown", ".mdx")):
        return "md"
    if lower.endswith(".rst"):
        return "rst"
    return "txt"


def _as_str_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        parts = re.split(r"[,\s]+", value) if "," in value or " " in value else [value]
        return [p.strip().lstrip("#") for p in parts if p.strip()]
    if isinstance(value, (list, tuple)):
        return [str(v).strip().lstrip("#") for v in value if isinstance(v, (str, int, float))]
    return []


def _frontmatter(lines: list[str]) -> tuple[dict[str, object], int, str | None]:
    """Return (mapping, first body line, warning)."""
    if not lines or lines[0].rstrip() != "---":
        return {}, 0, None
    for end in range(1, min(len(lines), 2000)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        return {}, 0, "frontmatter: no closing '---' line; treated as body"
    raw = "\n".join(lines[1:end])
    if len(raw.encode("utf-8", "replace")) > MAX_FRONTMATTER_BYTES:
        return {}, end + 1, f"frontmatter: larger than {MAX_FRONTMATTER_BYTES} bytes; ignored"
    if raw.count("*") > 100 and raw.count("&") > 10:
        return {}, end + 1, "frontmatter: too many YAML aliases; ignored"
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        return {}, end + 1, f"frontmatter: malformed YAML{where}: {getattr(exc, 'problem', exc)}"
    if data is None:
        return {}, end + 1, None
    if not isinstance(data, dict):
        return {}, end + 1, "frontmatter: not a mapping; ignored"
    return data, end + 1, None


def _link_target(source_path: str, target: str) -> str | None:
    target = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not target or _SCHEME.match(target) or target.startswith("//"):
        return None
    base = "" if target.startswith("/") else posixpath.dirname(source_path)
    joined = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
    if joined.startswith("../") or joined == "..":
        return None
    return joined


def _headings_and_blocks_md(lines: list[str], first: int) -> list[tuple[int, int, str, bool]]:
    """Split markdown into blocks: (start, end, level or 0, heading text or '')."""
    out: list[tuple[int, int, str, bool]] = []
    i = first
    n = len(lines)
    para_start: int | None = None

    def close_para(end: int) -> None:
        nonlocal para_start
        if para_start is not None:
            out.append((para_start, end, "", False))
            para_start = None

    while i < n:
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            close_para(i - 1)
            marker = fence.group(1)
            j = i + 1
            while j < n and not lines[j].lstrip().startswith(marker[0] * len(marker)):
                j += 1
            end = min(j, n - 1)
            out.append((i, end, "", False))
            i = end + 1
            continue
        atx = _ATX.match(line)
        if atx:
            close_para(i - 1)
            out.append((i, i, f"{len(atx.group(1))}\t{(atx.group(2) or '').strip()}", True))
            i += 1
            continue
        if (
            para_start is not None
            and para_start == i - 1
            and _SETEXT.match(line)
            and lines[i - 1].strip()
        ):
            level = 1 if line.strip().startswith("=") else 2
            para_start = None
            out.append((i - 1, i, f"{level}\t{lines[i - 1].strip()}", True))
            i += 1
            continue
        if not line.strip():
            close_para(i - 1)
        elif para_start is None:
            para_start = i
        i += 1
    close_para(n - 1)
    return out


def _headings_and_blocks_rst(lines: list[str]) -> list[tuple[int, int, str, bool]]:
    out: list[tuple[int, int, str, bool]] = []
    levels: list[str] = []
    para_start: int | None = None
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < n else ""
        underline = _RST_UNDERLINE.match(nxt)
        if line.strip() and underline and len(nxt.rstrip()) >= len(line.rstrip()) and not _RST_UNDERLINE.match(line):
            if para_start is not None:
                out.append((para_start, i - 1, "", False))
                para_start = None
            char = underline.group(1)
            if char not in levels:
                levels.append(char)
            out.append((i, i + 1, f"{min(levels.index(char) + 1, 6)}\t{line.strip()}", True))
            i += 2
            continue
        if not line.strip():
            if para_start is not None:
                out.append((para_start, i - 1, "", False))
                para_start = None
        elif para_start is None:
            para_start = i
        i += 1
    if para_start is not None:
        out.append((para_start, n - 1, "", False))
    return out


def _headings_and_blocks_txt(lines: list[str]) -> list[tuple[int, int, str, bool]]:
    out: list[tuple[int, int, str, bool]] = []
    para_start: int | None = None
    for i, line in enumerate(lines):
        if not line.strip():
            if para_start is not None:
                out.append((para_start, i - 1, "", False))
                para_start = None
        elif para_start is None:
            para_start = i
    if para_start is not None:
        out.append((para_start, len(lines) - 1, "", False))
    return out


def _strip_code(text: str) -> str:
    """Drop inline code so `#include` or `[[x]]` in code is not taken as a tag or a link."""
    return re.sub(r"`[^`\n]*`", " ", text)


def parse_note(rel_path: str, text: str) -> ParsedNote:
    """Parse `text` of the file at `rel_path` (posix, relative to the root)."""
    kind = kind_of(rel_path)
    lines = text.split("\n")
    stem = posixpath.splitext(posixpath.basename(rel_path))[0]
    meta: dict[str, object] = {}
    body_start = 0
    warning = None
    if kind == "md":
        meta, body_start, warning = _frontmatter(lines)
        raw_blocks = _headings_and_blocks_md(lines, body_start)
    elif kind == "rst":
        raw_blocks = _headings_and_blocks_rst(lines)
    else:
        raw_blocks = _headings_and_blocks_txt(lines)

    title_value = meta.get("title")
    title = str(title_value).strip() if isinstance(title_value, (str, int, float)) else ""
    first_heading = next((b for b in raw_blocks if b[3] and b[2].split("\t", 1)[0] == "1"), None)
    if not title and first_heading is not None:
        title = first_heading[2].split("\t", 1)[1]
    if not title and kind == "txt":
        first_line = next((l.strip() for l in lines if l.strip()), "")
        if len(first_line) <= 80:
            title = first_line  # a plain-text note's first short line reads as its title
    if not title:
        title = stem
    title_from_name = title == stem

    note = ParsedNote(title=title[:300], kind=kind, warning=warning, title_from_name=title_from_name)
    note_type = meta.get("type")
    note.note_type = str(note_type).strip() if isinstance(note_type, (str, int)) else None
    tags = _as_str_list(meta.get("tags") if "tags" in meta else meta.get("tag"))
    note.aliases = _as_str_list(meta.get("aliases") if "aliases" in meta else meta.get("alias"))

    # Build sections; the stack maps heading level -> text.
    stack: list[tuple[int, str]] = []
    current = Section(headings=[])
    note.sections.append(current)
    links: list[tuple[str, str]] = []
    in_code_lines: set[int] = set()
    for start, end, heading, is_heading in raw_blocks:
        block_text = "\n".join(lines[start : end + 1])
        if is_heading:
            level_s, heading_text = heading.split("\t", 1)
            level = int(level_s)
            while stack and stack[-1][0] >= level:
                stack.pop()
            # The note's own H1 is already the title: keep it out of the breadcrumb.
            if not (level == 1 and heading_text == title and not stack):
                stack.append((level, heading_text))
            current = Section(headings=[h for _, h in stack])
            note.sections.append(current)
            current.blocks.append(Block(start, end, block_text, is_heading=True))
            continue
        current.blocks.append(Block(start, end, block_text))
        if kind == "md" and _FENCE.match(lines[start]):
            in_code_lines.update(range(start, end + 1))
            continue
        scan = _strip_code(block_text)
        if kind == "md":
            tags.extend(m.group(1) for m in _TAG.finditer(scan))
            links.extend(("wiki", m.group(1).strip()) for m in _WIKI.finditer(scan))
            for m in _MDLINK.finditer(scan):
                target = _link_target(rel_path, m.group(1))
                if target is not None:
                    links.append(("path", target))

    note.sections = [s for s in note.sections if s.blocks]
    seen: set[str] = set()
    note.tags = [t for t in (t.strip().lower() for t in tags) if t and not (t in seen or seen.add(t))]
    seen_links: set[tuple[str, str]] = set()
    note.links = [l for l in links if l[1] != rel_path and not (l in seen_links or seen_links.add(l))]
    return note
