"""Links in the text of a note as it is being edited: where they are, which one is under the
cursor, what is being typed after `[[` or `](`, and the paragraph around the cursor.

Also how a link is written (`link_label`, `markdown_path`, `heading_slug`), the inverse of reading
one. Pure text functions over a list of lines (positions are Python string indices; the LSP layer
converts them from and to the client's units). The forms are the indexer's
(`kbls.links.forms`): `[[name]]`, `[[name#heading]]`, `[[name|label]]`, `[label](rel/path.md)`,
`[label](<rel/a path.md> "title")` and `[label](rel/path.md#heading)`; links inside inline code or a
fenced block are not links.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import Enum
from urllib.parse import quote, unquote

from kbls.links.forms import MARKDOWN_LINK, URL_SCHEME, WIKI_LINK, WIKI_NAME_STOPS, destination, unescape

#: a line longer than this is not searched for links (a minified blob, not prose).
MAX_LINE_CHARS = 20_000
#: what the paragraph around the cursor may give the model (~150 tokens: embedding stays ~ms).
MAX_CONTEXT_CHARS = 800
#: below this many characters the cursor's paragraph is too little meaning: the lines above join.
MIN_CONTEXT_CHARS = 60
#: how far from the cursor the paragraph (and, above it, the search for meaning) reaches.
CONTEXT_LINES_ABOVE = 40

#: a code fence line (CommonMark: up to three spaces, then three or more backticks or tildes).
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
#: the opening of an ATX heading (CommonMark); its text is `heading_text`'s (no regex reads it:
#: a lazy `(.*?)\s*#*$` backtracks quadratically over a line of spaces).
ATX_HEADING = re.compile(r"^\s{0,3}#{1,6}(?=\s|$)")
# Writing a link: what a label cannot hold, what `<…>` must escape, what an anchor drops.
_NOT_IN_LABEL = re.compile(r"[\[\]]")
_ANGLE_ESCAPES = re.compile(r"[<>\\]")
_SLUG_DROP = re.compile(r"[^\w\- ]")
# What is being typed: an open `[[` with no `]` after it, or an open `[label](`, its path
# typed in `<…>` (group 2, spaces allowed) or bare (group 3).
_OPEN_WIKI = re.compile(r"\[\[([^\[\]\n]*)$")
_OPEN_MDLINK = re.compile(r"\[([^\[\]\n]*)\]\((?:<((?:[^<>\\\n\[]|\\.)*)|((?!<)[^()\s]*))$")
# What follows the cursor of a written link: the rest of its name, then its close, or a heading
# or label and then its close (group 2).
_WIKI_REST = re.compile(rf"[^{WIKI_NAME_STOPS}]*(\]\]|[|#][^\[\]\n]*\]\])")
_MDLINK_REST = re.compile(r"[^()\s#]*(\)|#[^()\s]*\))")
_ANGLED_REST = re.compile(r"(?:[^<>\\\n#\[]|\\.)*(>\)|#[^<>\n]*>\))")


class LinkKind(str, Enum):
    """`[[wiki]]` links name a note; markdown links give a path relative to the note."""

    WIKI = "wiki"
    PATH = "path"


@dataclass(frozen=True, slots=True)
class LinkRef:
    """One link in a document: what it names and where its text is (0-based, end exclusive)."""

    kind: LinkKind
    #: wiki: the name as written (may be empty for `[[#heading]]`); path: the URL-decoded path.
    target: str
    heading: str | None
    line: int
    start: int
    end: int
    #: written with a label (`[[name|label]]`); markdown links always have one.
    labelled: bool = True


@dataclass(frozen=True, slots=True)
class TypedLink:
    """A link being typed: its form and what was typed of its target so far."""

    kind: LinkKind
    typed: str
    #: a markdown link's path typed in `<…>` (`[x](<my no`): completed as written, closed by `>)`.
    angled: bool = field(default=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class LinkTyping(TypedLink):
    """An unfinished link at the cursor: what was typed and the text a completion replaces."""

    line: int
    #: where the link's opening `[[` or `[` is.
    link_start: int
    #: the typed part (after `[[` or `(`), plus, inside a written link, the rest of its name and its `]]` or `)`.
    replace_start: int
    replace_end: int
    #: where an empty markdown label (`[](`) is, so a completion can fill it; None otherwise.
    empty_label_at: int | None = None


def _code_free(line: str) -> str:
    """The line with inline code spans blanked, same length (positions stay)."""
    return _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def fenced_lines(lines: list[str]) -> set[int]:
    """Line numbers inside fenced code blocks (fence lines included)."""
    inside: set[int] = set()
    fence: str | None = None
    for number, line in enumerate(lines):
        # a fence line holds a backtick or a tilde: most lines are not matched at all
        match = FENCE.match(line) if "`" in line or "~" in line else None
        if fence is None and match:
            fence = match.group(1)[0] * len(match.group(1))
            inside.add(number)
        elif fence is not None:
            inside.add(number)
            if match and match.group(1).startswith(fence) and not line.strip()[len(match.group(1)) :].strip():
                fence = None
    return inside


def _split_target(raw: str) -> tuple[str, str | None] | None:
    """A markdown link's (path, heading); None for a URL or a mail link (not a note)."""
    if URL_SCHEME.match(raw) or raw.startswith("//"):
        return None
    path, _, fragment = raw.partition("#")
    path = unquote(path.split("?", 1)[0])
    return path, (unquote(fragment) if fragment else None)


def line_links(number: int, line: str) -> list[LinkRef]:
    """The links of one line (numbered `number`) that is not in a fence."""
    if len(line) > MAX_LINE_CHARS or "[" not in line:
        return []
    # a line without a backtick has no code span; one without `[[` (or `](`) no link of that form
    text = _code_free(line) if "`" in line else line
    found = [
        LinkRef(
            LinkKind.WIKI, m.group(1).strip(), (m.group(2) or "").strip() or None, number, m.start(), m.end(),
            labelled=m.group(3) is not None,
        )
        for m in WIKI_LINK.finditer(text)
        if m.group(1).strip() or (m.group(2) or "").strip()
    ] if "[[" in text else []
    if "](" not in text:
        return found
    wiki = len(found)
    for m in MARKDOWN_LINK.finditer(text):
        parts = _split_target(destination(m))
        if parts is not None and (parts[0] or parts[1]):
            found.append(LinkRef(LinkKind.PATH, parts[0], parts[1], number, m.start(), m.end()))
    return sorted(found, key=_start) if wiki and len(found) > wiki else found


def _start(ref: LinkRef) -> int:
    return ref.start


def links_in(lines: list[str], fenced: Collection[int] | None = None) -> list[LinkRef]:
    """Every wiki and relative markdown link of a document, in order (not those in code);
    `fenced` its `fenced_lines`, when read already."""
    fenced = fenced_lines(lines) if fenced is None else fenced
    out: list[LinkRef] = []
    for number, line in enumerate(lines):
        if "[" in line and number not in fenced:
            out.extend(line_links(number, line))
    return out


def link_at(lines: list[str], line: int, character: int) -> LinkRef | None:
    """The link whose text holds the position, if any."""
    if not 0 <= line < len(lines) or line in fenced_lines(lines[: line + 1]):
        return None
    return next((ref for ref in line_links(line, lines[line]) if ref.start <= character <= ref.end), None)


def typing_at(lines: list[str], line: int, character: int) -> LinkTyping | None:
    """The unfinished `[[…` or `[label](…` the cursor is in; None anywhere else."""
    if not 0 <= line < len(lines) or len(lines[line]) > MAX_LINE_CHARS:
        return None
    text = lines[line].rstrip("\r\n")
    before, after = text[:character], text[character:]
    if before.count("`") % 2 or line in fenced_lines(lines[: line + 1]):
        return None  # inside code
    wiki = _OPEN_WIKI.search(before)
    if wiki is not None:
        typed = wiki.group(1)
        if "|" in typed or "#" in typed:
            return None  # typing the label or the heading: not a note name
        end = _replace_end(_WIKI_REST.match(after), "]]", character)
        if end is None:
            return None  # in the name of a link with a heading or label: a completion would lose it
        return LinkTyping(LinkKind.WIKI, typed, line, wiki.start(), wiki.start(1), end)
    markdown = _OPEN_MDLINK.search(before)
    if markdown is not None:
        angled = markdown.group(2) is not None
        group = 2 if angled else 3
        typed = markdown.group(group)
        if URL_SCHEME.match(typed) or "#" in typed or typed.startswith("//"):
            return None
        rest, close = (_ANGLED_REST, ">)") if angled else (_MDLINK_REST, ")")
        end = _replace_end(rest.match(after), close, character)
        if end is None:
            return None
        label_at = markdown.start(1) if not markdown.group(1) else None
        return LinkTyping(
            LinkKind.PATH, unquote(unescape(typed)), line, markdown.start(), markdown.start(group), end, label_at,
            angled=angled,
        )
    return None


def _replace_end(rest: re.Match[str] | None, close: str, character: int) -> int | None:
    """Where a completion's text ends: the cursor, or (inside a written link) the link's close,
    the rest of its name included; None when a heading or label follows the name."""
    if rest is None:
        return character
    return character + rest.end() if rest.group(1) == close else None


def opening_at(lines: list[str], line: int, character: int) -> LinkTyping | None:
    """A lone `[` just before the cursor, which may become `[[`: the wiki link it would start,
    with the same context (`context_around`) as once the second `[` is typed."""
    if not 0 <= line < len(lines) or len(lines[line]) > MAX_LINE_CHARS or character < 1:
        return None
    text = lines[line].rstrip("\r\n")
    before, after = text[:character], text[character:]
    if not before.endswith("[") or before.endswith("[[") or before.count("`") % 2:
        return None
    if line in fenced_lines(lines[: line + 1]):
        return None
    end = character + (1 if after.startswith("]") else 0)
    return LinkTyping(LinkKind.WIKI, "", line, character - 1, character, end)


def _paragraph(lines: list[str], line: int) -> tuple[int, int]:
    """(first, last) line of the paragraph holding `line`: non-blank lines, no heading crossed."""
    first = last = line
    while first > 0 and line - first < CONTEXT_LINES_ABOVE and lines[first - 1].strip() and not ATX_HEADING.match(
        lines[first]
    ):
        first -= 1
    while last + 1 < len(lines) and last - line < CONTEXT_LINES_ABOVE and lines[last + 1].strip() and not (
        ATX_HEADING.match(lines[last + 1])
    ):
        last += 1
    return first, last


def context_around(lines: list[str], typing: LinkTyping) -> str:
    """The text whose meaning ranks the notes: the cursor's paragraph without the link being
    typed, and the lines above it (up to the heading) when the paragraph says too little."""
    if not lines:
        return ""
    first, last = _paragraph(lines, typing.line)
    own = lines[typing.line]
    cut = own[: typing.link_start] + own[typing.replace_end :]
    parts = [*lines[first : typing.line], cut, *lines[typing.line + 1 : last + 1]]
    text = " ".join(_words(p) for p in parts if p.strip())
    top = first
    # the paragraph may start at its heading (`_paragraph`): nothing above that is its section
    while (
        len(text) < MIN_CONTEXT_CHARS and top > 0 and typing.line - top < CONTEXT_LINES_ABOVE
        and not ATX_HEADING.match(lines[top])
    ):
        top -= 1
        above = lines[top].strip()
        if above:
            text = f"{above.lstrip('#').strip()} {text}".strip()
        if ATX_HEADING.match(lines[top]):
            break
    return _wiki_labels(text)[-MAX_CONTEXT_CHARS:]


def heading_text(line: str) -> str | None:
    """An ATX heading's text, without its opening `#`s and a closing run of `#`s after a space
    (`## C#` is `C#`); None when the line is no heading."""
    opening = ATX_HEADING.match(line)
    if opening is None:
        return None
    text = line[opening.end() :].strip()
    closed = text.rstrip("#")
    return closed.strip() if not closed or closed[-1].isspace() else text


def _words(line: str) -> str:
    """A line as prose: a heading without its `#`s."""
    text = heading_text(line)
    return line.strip() if text is None else text


def _wiki_labels(text: str) -> str:
    """Links read as their words: `[[a|b]]` -> `b`, `[x](p.md)` -> `x`."""
    text = WIKI_LINK.sub(lambda m: m.group(3) or m.group(1), text)
    return MARKDOWN_LINK.sub(lambda m: m.group(1), text)


# -- writing a link ---------------------------------------------------------------------------
def link_label(title: str) -> str:
    """`title` as a link's label: without brackets, which neither link form takes in one."""
    return " ".join(_NOT_IN_LABEL.sub("", title).split())


def markdown_path(source: str, target: str, angled: bool = False) -> str:
    """`target` relative to the folder of `source`, as a markdown link writes it: percent-encoded,
    or inside `<…>` (`angled`) as it is, with `<`, `>` and `\\` escaped."""
    relative = posixpath.relpath(target, posixpath.dirname(source) or ".")
    return _ANGLE_ESCAPES.sub(r"\\\g<0>", relative) if angled else quote(relative, safe="/._-~")


def heading_slug(text: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to `-`."""
    return _SLUG_DROP.sub("", text.strip().lower()).replace(" ", "-")
