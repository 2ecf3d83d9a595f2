"""Unlinked mentions of a paragraph: the notes it talks about without linking them, each with
the edit that links it in the workspace's style.

Two kinds, names first: a note's title or alias written in the paragraph's plain text (outside
links and code; one line, up to `MAX_NAME_WORDS` words, compared by `name_key`; the longest
name wins where two overlap; a one-word name needs `MIN_ONE_WORD_CHARS` letters), whose words
become the link (`[[words]]` where that names the note alone in a title-style workspace, else
`[[name|words]]`); then the notes nearest in meaning to the paragraph (the model's embedding, as
`[[` completion ranks notes) above `MEANING_FLOOR`, whose link is added at the paragraph's end.
Never the note itself, nor a note the paragraph links already.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbls.links.forms import name_key
from kbls.links.headings import body_start
from kbls.links.names import Catalogue, LinkStyle, Note, WikiForm, wiki_insert
from kbls.links.suggest import LinkQuery, NoteLinks
from kbls.links.syntax import ATX_HEADING, FENCE, LinkKind, fenced_lines, links_in
from kbls.links.view import NoteView

#: the longest name looked for, in words.
MAX_NAME_WORDS = 6
#: a one-word title shorter than this is too common a word to be a mention ("Go", "Art").
MIN_ONE_WORD_CHARS = 4
#: nearness in meaning (cosine) a note needs to be proposed for a paragraph (docs/benchmarks.md,
#: "Unlinked mentions": chosen on the pkm vault).
MEANING_FLOOR = 0.55
#: proposals by meaning per paragraph, of the notes nearest to it.
MEANING_PROPOSALS = 3
NEAREST = 30
#: in the order of name mentions: per word after the first, and for a name written as the note writes it.
NAME_WORDS_BONUS = 0.1
EXACT_CASE_BONUS = 0.2
#: a paragraph longer than this many lines is read up to there.
MAX_PARAGRAPH_LINES = 40
#: a word: letters and digits, `-` and `.` inside (an apostrophe ends it: "Ada Lovelace's").
_WORD = re.compile(r"[^\W_](?:[\w.-]*[^\W_])?")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
#: an autolink or HTML tag (`<https://…>`, `<a href="…">`), a bare URL: no words of prose.
_NOT_PROSE = re.compile(r"<[A-Za-z/!][^<>\n]*>|\b(?:https?|ftp)://\S+|\bwww\.\S+")


@dataclass(frozen=True, slots=True)
class Mention:
    """A note the paragraph mentions: link `text` replaces `line`[`start`:`end`] (an empty range
    at the paragraph's end for a note found by meaning)."""

    path: str
    title: str
    line: int
    start: int
    end: int
    text: str
    #: "title", "alias" or "meaning".
    how: str
    #: the words linked ("" for meaning), and the cosine for meaning (1.0 for a name).
    words: str
    score: float


def paragraph_at(lines: list[str], line: int) -> tuple[int, int] | None:
    """The paragraph holding `line`: its run of non-blank lines, no heading, fence or front matter."""
    if not 0 <= line < len(lines) or not lines[line].strip():
        return None
    code = fenced_lines(lines[: line + MAX_PARAGRAPH_LINES + 1])
    if _blocked(lines, line, code):
        return None
    first = last = line
    while first > 0 and line - first < MAX_PARAGRAPH_LINES and lines[first - 1].strip() and not (
        _blocked(lines, first - 1, code)
    ):
        first -= 1
    while last + 1 < len(lines) and last - first < MAX_PARAGRAPH_LINES and lines[last + 1].strip() and not (
        _blocked(lines, last + 1, code)
    ):
        last += 1
    return first, last


def _blocked(lines: list[str], line: int, code: set[int]) -> bool:
    text = lines[line]
    return bool(ATX_HEADING.match(text) or FENCE.match(text) or text.strip() == "---") or line in code


def name_mentions(
    catalogue: Catalogue, style: LinkStyle, source: str, lines: list[str], first: int, last: int, linked: set[str]
) -> list[Mention]:
    """Titles and aliases of other notes written in the paragraph's plain text, in order."""
    out: list[Mention] = []
    taken: set[str] = set(linked) | {source}
    for number in range(first, last + 1):
        text = _plain(lines[number])
        words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
        at = 0
        while at < len(words):
            found = _longest(catalogue, text, words, at, taken)
            if found is None:
                at += 1
                continue
            note, how, count = found
            start, end = words[at][0], words[at + count - 1][1]
            written = lines[number][start:end]
            out.append(Mention(note.path, note.title, number, start, end, _link(catalogue, style, source, note, written),
                               how, written, 1.0))
            taken.add(note.path)
            at += count
    return out


def _longest(
    catalogue: Catalogue, text: str, words: list[tuple[int, int]], at: int, taken: set[str]
) -> tuple[Note, str, int] | None:
    for count in range(min(MAX_NAME_WORDS, len(words) - at), 0, -1):
        phrase = text[words[at][0] : words[at + count - 1][1]]
        if count == 1 and len(phrase) < MIN_ONE_WORD_CHARS:
            continue
        key = name_key(phrase)
        for how, table in (("title", catalogue.by_title), ("alias", catalogue.by_alias)):
            notes = [n for n in table.get(key, []) if n.path not in taken]
            if len(notes) == 1:
                return notes[0], how, count
    return None


def _plain(line: str) -> str:
    """The line with links, code, URLs and `<…>` autolinks or HTML tags blanked, same length
    (positions stay)."""
    text = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
    text = _NOT_PROSE.sub(lambda m: " " * len(m.group(0)), text)
    for ref in links_in([text]):
        text = text[: ref.start] + " " * (ref.end - ref.start) + text[ref.end :]
    return text


def _link(catalogue: Catalogue, style: LinkStyle, source: str, note: Note, written: str) -> str:
    """`written` as a link to `note`: `[[written]]` where that names it alone in a title-style
    workspace, else the workspace's name for it with `written` as the label."""
    if style.form == WikiForm.TITLE and not style.labelled and [n.path for n in catalogue.named(written, source)] == [
        note.path
    ]:
        return f"[[{written}]]"
    name = wiki_insert(catalogue, note, style)[:-2].partition("|")[0]
    return f"[[{name}|{written}]]" if name != written else f"[[{name}]]"


def linked_from(catalogue: Catalogue, source: str, lines: list[str], first: int, last: int) -> set[str]:
    """The notes the paragraph's wiki links (and markdown paths) name already."""
    out: set[str] = set()
    for ref in links_in(lines[first : last + 1]):
        if ref.kind == LinkKind.WIKI and ref.target:
            out.update(n.path for n in catalogue.named(ref.target, source)[:1])
    return out


def mentions(links: NoteLinks, source: str, lines: list[str], line: int, meaning: bool = True) -> list[Mention]:
    """The unlinked mentions of the paragraph at `line` of the note at `source`, most likely
    first: names (with `meaning`, a name whose note is also near the paragraph in meaning first),
    then the notes nearest in meaning above the floor; [] outside a paragraph."""
    span = paragraph_at(lines, line)
    if span is None:
        return []
    first, last = span
    catalogue = links.catalogue()
    style = links.style(catalogue, lines)
    linked = linked_from(catalogue, source, lines, first, last)
    named = name_mentions(catalogue, style, source, lines, first, last, linked)
    if not meaning:
        return named
    context = " ".join(_plain(lines[n]).strip() for n in range(first, last + 1))
    query = LinkQuery(kind=LinkKind.WIKI, typed="", context=context, document=lines, limit=NEAREST)
    nearest = [s for s in links.suggest(source, query) if s.meaning is not None]
    cosine = {s.path: s.meaning or 0.0 for s in nearest}
    named.sort(key=lambda m: -_likelihood(m, cosine.get(m.path, 0.0)))
    taken = linked | {m.path for m in named} | {source}
    end = len(lines[last])
    near = [
        Mention(s.path, s.title, last, end, end, f" [[{s.insert[:-2]}]]", "meaning", "", s.meaning or 0.0)
        for s in nearest if (s.meaning or 0.0) >= MEANING_FLOOR and s.path not in taken
    ]
    return named + near[:MEANING_PROPOSALS]


def _likelihood(mention: Mention, cosine: float) -> float:
    """How likely a name mention is the note meant: its nearness in meaning to the paragraph,
    more for a name of several words and for one written as the note writes it (a capitalised
    title written in lower case is more often the common word)."""
    words = len(mention.words.split())
    exact = mention.words == mention.title
    return max(cosine, 0.0) + NAME_WORDS_BONUS * (words - 1) + (EXACT_CASE_BONUS if exact else 0.0)


def note_name_mentions(links: NoteLinks, source: str, view: NoteView) -> list[Mention]:
    """The names of other notes written unlinked in every paragraph of the note whose text is
    `view` (no model: what the optional hint diagnostic shows). Its code blocks are the view's
    (`NoteView.fenced`, as every link feature reads them)."""
    lines, fenced = view.lines, view.fenced
    catalogue = links.catalogue()
    style = links.style(catalogue, lines)
    out: list[Mention] = []

    def prose(number: int) -> bool:
        return number not in fenced and bool(lines[number].strip()) and not ATX_HEADING.match(lines[number])

    line = body_start(lines)
    while line < len(lines):
        if not prose(line):
            line += 1
            continue
        first = line
        while line + 1 < len(lines) and prose(line + 1):
            line += 1
        linked = linked_from(catalogue, source, lines, first, line)
        out.extend(name_mentions(catalogue, style, source, lines, first, line, linked))
        line += 1
    return out
