"""Parse a note into metadata (frontmatter, tags, links) and heading-delimited blocks.

Markdown: the block structure is CommonMark's (`markdown.py`, markdown-it-py): YAML frontmatter
(title, tags, aliases, type), ATX and setext headings, code blocks kept whole, lists split by
item; inline `#tags`, `[[wiki links]]` and `[text](relative/links.md)` are taken from the raw
text outside code. reStructuredText: underlined titles become headings. Plain text: paragraphs.
Malformed frontmatter is reported in `ParsedNote.warning` and the body is still indexed; so is a
note past `MAX_MARKDOWN_LINES` or `MAX_SECTIONS` (the rest is kept as text: memory and time stay
bounded on pathological notes, docs/configuration.md "Limits").
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from urllib.parse import unquote

import yaml

from kbls.indexing.formats.org import org_structure
from kbls.indexing.markdown import MarkdownStructure, SourceBlock, line_runs, parse_markdown
from kbls.indexing.spans import note_spans
from kbls.indexing.templates import has_templates, strip_templates
from kbls.links.forms import MARKDOWN_LINK, URL_SCHEME, WIKI_LINK, destination
from kbls.notepath import note_stem
from kbls.storage.records import NoteSpans

#: frontmatter larger than this is not parsed (a YAML bomb is cheap to write, costly to load).
MAX_FRONTMATTER_BYTES = 64 * 1024
#: a closing `---` further down than this is not looked for: the lines are body.
MAX_FRONTMATTER_LINES = 2000
#: markdown structure is parsed this far (time: markdown-it-py reads ~20k list lines a second);
#: the rest of a longer note is indexed as plain paragraphs, with a warning.
MAX_MARKDOWN_LINES = 50_000
#: sections (headings) per note; later headings are indexed as text of the last section, with a
#: warning. Bounds breadcrumb and chunking work on pathological notes (20k headings: see docs).
MAX_SECTIONS = 2_000



class _TextLoader(yaml.SafeLoader):
    """PyYAML's safe loader with plain scalars kept as text: YAML 1.1 reads `title: 2024-01-05`
    as a date, `title: No` as False and `aliases: [2024-01-05]` as a date (then dropped), but a
    title, alias, tag or type is text, as the user wrote it. Null (`~`, `null`, empty) and merge
    keys (`<<`) are still resolved; an explicit tag (`!!int 5`) is still built."""


_TextLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag in ("tag:yaml.org,2002:null", "tag:yaml.org,2002:merge")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}[ \t]*$")
INLINE_TAG = re.compile(r"(?<![\w#&/\]\[(])#([A-Za-z_\u00c0-\uffff][\w/\-\u00c0-\uffff]*)")


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
    """What the index keeps of one note: metadata, links and its sections of blocks."""

    title: str
    kind: str  # "md", "txt", "rst", "org", "pdf" or "html"
    note_type: str | None = None
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    #: ("path", "dir/other.md") resolved against the root, or ("wiki", "target name").
    links: list[tuple[str, str]] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    warning: str | None = None
    #: the title is the file name (no frontmatter title, H1 or first line): not note content.
    title_from_name: bool = False
    #: tiny sections may share a chunk; not a PDF's pages: each chunk names its one page.
    merge_sections: bool = True
    #: where the links and tags are written (markdown only; `kbls.indexing.spans`).
    spans: NoteSpans = field(default_factory=NoteSpans)


def kind_of(path: str) -> str:
    lower = path.lower()
    if lower.endswith((".md", ".markdown", ".mdx")):
        return "md"
    if lower.endswith(".rst"):
        return "rst"
    if lower.endswith(".org"):
        return "org"
    return "txt"


def _tag_list(value: object) -> list[str]:
    """Tags from front matter: a list, or one string of tags split by commas or spaces ("#" dropped)."""
    if isinstance(value, str):
        return [p.lstrip("#") for p in re.split(r"[,\s]+", value) if p.strip("#")]
    return [t.lstrip("#") for t in _alias_list(value)]


def _alias_list(value: object) -> list[str]:
    """Aliases from front matter: a list, or one string (an alias is often several words: split
    only by commas)."""
    if isinstance(value, str):
        return [p.strip() for p in value.split(",") if p.strip()]
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if isinstance(v, (str, int, float)) and str(v).strip()]
    return []


def _frontmatter(raw: str) -> tuple[dict[str, object], str | None]:
    """Return (mapping, warning) for the YAML between the `---` lines."""
    if len(raw.encode("utf-8", "replace")) > MAX_FRONTMATTER_BYTES:
        return {}, f"frontmatter: larger than {MAX_FRONTMATTER_BYTES} bytes; ignored"
    if raw.count("*") > 100 and raw.count("&") > 10:
        return {}, "frontmatter: too many YAML aliases; ignored"
    try:
        data = yaml.load(raw, Loader=_TextLoader)  # a SafeLoader: builds no Python objects
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        return {}, f"frontmatter: malformed YAML{where}: {getattr(exc, 'problem', exc)}"
    except RecursionError:  # PyYAML composes nested collections recursively: `[[[[…`
        return {}, "frontmatter: nested too deeply; ignored"
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        # PyYAML's constructors raise plain Python errors for a value they cannot build: an
        # explicitly tagged impossible date (`!!timestamp 2024-02-30`), `!!int abc`, `!!bool maybe`.
        return {}, f"frontmatter: a value YAML cannot read ({type(exc).__name__}: {exc}); ignored"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "frontmatter: not a mapping; ignored"
    return data, None


def _link_target(source_path: str, target: str) -> str | None:
    target = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not target or URL_SCHEME.match(target) or target.startswith("//"):
        return None
    base = "" if target.startswith("/") else posixpath.dirname(source_path)
    joined = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
    if joined.startswith("../") or joined == "..":
        return None
    return joined


def _blocks_md(lines: list[str]) -> tuple[MarkdownStructure, dict[str, object], list[str]]:
    """(structure, frontmatter mapping, warnings) of a markdown note."""
    opened = bool(lines) and lines[0].rstrip() == "---"
    if opened and not any(line.rstrip() in ("---", "...") for line in lines[1:MAX_FRONTMATTER_LINES]):
        structure = parse_markdown(lines, front_matter=False, max_lines=MAX_MARKDOWN_LINES)
        return structure, {}, ["frontmatter: no closing '---' line; treated as body"]
    structure = parse_markdown(lines, max_lines=MAX_MARKDOWN_LINES)
    warnings = []
    if structure.parsed_lines < len(lines):
        warnings.append(
            f"longer than {MAX_MARKDOWN_LINES:,} lines: from line {structure.parsed_lines + 1} on, read as plain paragraphs"
        )
    if structure.front_matter is None:
        return structure, {}, warnings
    meta, warning = _frontmatter(structure.front_matter)
    return structure, meta, [warning, *warnings] if warning else warnings


def _blocks_rst(lines: list[str]) -> list[SourceBlock]:
    """Paragraphs and underlined titles; levels in the order underline characters first appear."""
    out: list[SourceBlock] = []
    levels: list[str] = []
    #: the first line not yet in a block: the paragraphs from here on end at the next title.
    rest = 0
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < n else ""
        underline = _RST_UNDERLINE.match(nxt)
        if line.strip() and underline and len(nxt.rstrip()) >= len(line.rstrip()) and not _RST_UNDERLINE.match(line):
            out += _paragraphs(lines, rest, i)
            char = underline.group(1)
            if char not in levels:
                levels.append(char)
            out.append(SourceBlock(i, i + 1, heading_level=min(levels.index(char) + 1, 6), heading_text=line.strip()))
            i += 2
            rest = i
            continue
        i += 1
    return out + _paragraphs(lines, rest, n)


def _blocks_txt(lines: list[str], first: int = 0) -> list[SourceBlock]:
    """Paragraphs: runs of non-blank lines from line `first` on."""
    return _paragraphs(lines, first, len(lines))


def _paragraphs(lines: list[str], start: int, stop: int) -> list[SourceBlock]:
    return line_runs(start, stop, lambda number: bool(lines[number].strip()))


def _strip_code(text: str) -> str:
    """Drop inline code so `#include` or `[[x]]` in code is not taken as a tag or a link."""
    return re.sub(r"`[^`\n]*`", " ", text)


def _text_outside_code(lines: list[str], block: SourceBlock, block_text: str, code_lines: frozenset[int]) -> str:
    """The block's text without code (inline spans, and fences nested in a list item or quote)."""
    if code_lines.isdisjoint(range(block.start, block.end + 1)):
        return _strip_code(block_text)
    numbered = enumerate(lines[block.start : block.end + 1], block.start)
    return _strip_code("\n".join(line for number, line in numbered if number not in code_lines))


def _links(rel_path: str, text: str) -> list[tuple[str, str]]:
    # `[[#heading]]` (no name) links within the note: not an edge.
    out = [("wiki", m.group(1).strip()) for m in WIKI_LINK.finditer(text) if m.group(1)]
    for m in MARKDOWN_LINK.finditer(text):
        target = _link_target(rel_path, destination(m))
        if target is not None:
            out.append(("path", target))
    return out


def _only_tags(lines: list[str], block: SourceBlock) -> bool:
    """Whether `block` is a line of hashtags only (`#getting-started #guide`): a vault's page
    tags, which say what the page is filed under, not what it is called."""
    text = " ".join(lines[block.start : block.end + 1]).strip()
    return bool(text) and not INLINE_TAG.sub("", text).strip()


def _leading_h1(blocks: list[SourceBlock], lines: list[str]) -> str:
    """The text of an H1 that opens the note (only hashtag lines before it), else "". An H1
    further down is a section: a vault that names a page by its file name (SilverBullet,
    Obsidian) writes `# Setup` after the page's opening text."""
    for block in blocks:
        if block.heading_level == 1:
            return block.heading_text
        if block.is_code or not _only_tags(lines, block):
            return ""
    return ""


def _title(meta: dict[str, object], blocks: list[SourceBlock], kind: str, lines: list[str], stem: str) -> str:
    """Frontmatter title, else the H1 that opens the note, else (plain text) a short first line,
    else the file name."""
    title_value = meta.get("title")
    title = str(title_value).strip() if isinstance(title_value, (str, int, float)) else ""
    if not title and kind == "md":
        title = _leading_h1(blocks, lines)
    elif not title:
        title = next((b.heading_text for b in blocks if b.heading_level == 1), "")
    if not title and kind == "txt":
        first_line = next((line.strip() for line in lines if line.strip()), "")
        if len(first_line) <= 80:
            title = first_line  # a plain-text note's first short line reads as its title
    return title or stem


def _front_matter_only(note: ParsedNote, front_lines: int) -> Section:
    """The one section of a note that is only front matter: its title and aliases as the text,
    over the front matter's lines, so a search finds it by title, alias or tag (it had no chunk)."""
    text = "\n".join(dict.fromkeys([note.title, *note.aliases]))
    return Section(headings=[], blocks=[Block(0, front_lines - 1, text)])


def parse_note(rel_path: str, text: str, kind: str | None = None) -> ParsedNote:
    """Parse `text` of the file at `rel_path` (posix, relative to the root), as `kind` (default:
    the kind its name says; a saved web page's extracted text is parsed as markdown)."""
    kind = kind or kind_of(rel_path)
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # the markdown parser counts lines so
    lines = text.split("\n")
    stem = note_stem(rel_path)
    meta: dict[str, object] = {}
    warnings: list[str] = []
    code_lines: frozenset[int] = frozenset()
    plain_from = len(lines)  # markdown beyond MAX_MARKDOWN_LINES: plain paragraphs, no tags or links
    front_lines = 0  # lines of the front matter, its `---` lines included
    if kind == "md":
        structure, meta, warnings = _blocks_md(lines)
        code_lines, plain_from = structure.code_lines, structure.parsed_lines
        front_lines = structure.body_start if structure.front_matter is not None else 0
        blocks = structure.blocks + _blocks_txt(lines, plain_from)
    elif kind == "rst":
        blocks = _blocks_rst(lines)
    elif kind == "org":
        blocks, meta = org_structure(lines, stem)
    else:
        blocks = _blocks_txt(lines)

    title = _title(meta, blocks, kind, lines, stem)
    note = ParsedNote(title=title[:300], kind=kind, title_from_name=title == stem)
    note_type = meta.get("type")
    note.note_type = str(note_type).strip() if isinstance(note_type, (str, int)) else None
    tags = _tag_list(meta.get("tags") if "tags" in meta else meta.get("tag"))
    note.aliases = _alias_list(meta.get("aliases") if "aliases" in meta else meta.get("alias"))

    # Build sections; the stack maps heading level -> text.
    stack: list[tuple[int, str]] = []
    current = Section(headings=[])
    note.sections.append(current)
    links: list[tuple[str, str]] = []
    tag_lines: set[int] = set()
    capped_at: int | None = None
    for block in blocks:
        block_text = "\n".join(lines[block.start : block.end + 1])
        if block.heading_level and len(note.sections) >= MAX_SECTIONS:
            capped_at = block.start if capped_at is None else capped_at
        elif block.heading_level:
            level, heading = block.heading_level, block.heading_text
            while stack and stack[-1][0] >= level:
                stack.pop()
            # The note's own H1 is already the title: keep it out of the breadcrumb.
            if not (level == 1 and heading == title and not stack):
                stack.append((level, heading))
            current = Section(headings=[h for _, h in stack])
            note.sections.append(current)
            current.blocks.append(Block(block.start, block.end, block_text, is_heading=True))
            continue
        if kind == "md" and not block.is_code and block.start < plain_from:
            scan = _text_outside_code(lines, block, block_text, code_lines)
            tag_lines.update(n for n in range(block.start, block.end + 1) if n not in code_lines)
            tags.extend(m.group(1) for m in INLINE_TAG.finditer(scan))
            links.extend(_links(rel_path, scan))
        if kind == "md" and has_templates(block_text):
            block_text = strip_templates(block_text, code=block.is_code)
            if not block_text.strip():  # a line of markup only (`{{< tabpane text=true >}}`)
                continue
        current.blocks.append(Block(block.start, block.end, block_text))

    if capped_at is not None:
        warnings.append(f"more than {MAX_SECTIONS:,} headings: from line {capped_at + 1} on, headings are read as text")
    note.warning = "; ".join(warnings) or None
    note.sections = [s for s in note.sections if s.blocks]
    if not note.sections and front_lines and meta:  # not for an empty `---` pair
        note.sections = [_front_matter_only(note, front_lines)]
    note.tags = [tag for tag in dict.fromkeys(t.strip().lower() for t in tags) if tag]
    note.links = [link for link in dict.fromkeys(links) if link[1] != rel_path]
    if kind == "md":
        note.spans = note_spans(
            rel_path, lines[:plain_from], code_lines=code_lines, tag_lines=tag_lines, front_lines=front_lines,
            front_tags=frozenset(note.tags), tag_pattern=INLINE_TAG,
        )
    return note
