"""A short excerpt of a chunk for result lists: the sentence that best matches the query.

A section is read as units: the sentences of its prose (paragraphs and list items), and each
table row and line of code on its own. The shown unit is the one holding the most query words
(a word counts at the start of a word, in any of its forms: `commits` finds `commit` and
`committed`); a table row or a line of code must hold more of them than every sentence to be
chosen, so a raw row (`Last dirty commit | 4af64070 | d404ebd0`) or a dict dump is shown only
where the match is. With no query word in the section (a hit by meaning alone) its first
sentence of prose is shown. What follows the chosen sentence reads on as prose up to the width,
not past the next heading.

Every hit of every search gets one, so it stays cheap: the body is cut into units with one pass
over its lines, and only the query words the body holds are looked for unit by unit
(docs/benchmarks.md, "Snippets by sentence").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from itertools import chain

from kbls.query.syntax import STOPWORDS, content_terms, number_forms

SNIPPET_CHARS = 200
_FENCE = re.compile(r"^\s*(```|~~~)")
_RULE = re.compile(r"^\s*(-{3,}|={3,}|\*{3,}|_{3,})\s*$")
_TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
#: a sentence ends at `.`, `!`, `?` or `…` (with a closing quote or bracket) before a space and
#: a capital, a digit or an opening quote: "e.g. this" and "v1.2 is" stay whole.
_SENTENCE_END = re.compile(r"[.!?…][\"')\]]?(\s+)(?=[\"'(\[]?[A-Z0-9À-ÖØ-Þ])")
#: characters that are rare in prose and everywhere in code, data dumps and markup (counted by
#: what `str.translate` leaves out: one C-level pass over the line).
_DROP_SYMBOLS = str.maketrans("", "", "{}[]()<>=;'\"`|\\$&*^~+@#%")
_DROP_SPACE = str.maketrans("", "", " \t")
#: a line without any of these is prose however many quotes and brackets it has.
_CODE_HINT = re.compile(r"[{}\[\]=;|<>$\\]")
#: a line of more symbols than this share of its visible characters is code (`{'a': 1, 'b': [2]}`).
_CODE_SYMBOL_SHARE = 0.2
#: query words shorter than this match whole words only (`git` not in `digit`, `github`).
_PREFIX_MIN_CHARS = 4
_SUFFIXES = ("ing", "ed", "es", "s")
#: with no query word in a section, its opening sentence is the first of these that holds this
#: many content words (three letters or more, not function words).
OPENING_SENTENCES = 3
SUBSTANTIAL_WORDS = 4
_CONTENT_WORD = re.compile(r"[^\W\d_]{3,}")
#: chunk bodies whose blocks are kept (about 1 KB each).
BLOCKS_CACHED = 4096


class Kind(Enum):
    PROSE = "prose"
    DATA = "data"  # a table row or a line of code: shown only where the match is
    HEADING = "heading"


@dataclass(frozen=True, slots=True)
class Unit:
    """One sentence, table row or line of code of a section, its spaces made single."""

    text: str
    kind: Kind
    #: `text` lowercased, once (blocks are kept: see `blocks`)
    lowered: str = ""


@dataclass(frozen=True, slots=True)
class Term:
    """A query word as the snippet looks for it: the pattern that finds any of its forms at the
    start of a word (the whole word for a short one), and those forms, one of which a text must
    hold (a quick substring test before the pattern)."""

    word: str
    #: any of the forms, as a literal (the regex engine scans for a literal fast; an assertion
    #: before it would be tried at every position): `find` checks the word's start itself.
    pattern: re.Pattern[str]
    forms: tuple[str, ...]
    #: the form must end where the word ends (a short word)
    whole: bool = False

    def find(self, lowered: str) -> int:
        """Where the word starts in `lowered`, -1 if nowhere."""
        for match in self.pattern.finditer(lowered):
            at, end = match.start(), match.end()
            if at and _word_char(lowered[at - 1]):
                continue
            if self.whole and end < len(lowered) and _word_char(lowered[end]):
                continue
            return at
        return -1

    def in_text(self, lowered: str) -> bool:
        return any(form in lowered for form in self.forms) and self.find(lowered) >= 0


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def snippet_terms(text: str) -> list[Term]:
    """The content words of a query (function words only when it has nothing else), each
    matched at a word's start by its stem (`committing`, `commits` -> `commit`) and in its
    other number (`cities` -> `city`)."""
    out = []
    for term in content_terms(text):
        spellings = {term, *number_forms(term)}
        stem = _stem(term)
        if len(stem) >= _PREFIX_MIN_CHARS:
            forms = tuple(sorted({stem, *(s for s in spellings if not s.startswith(stem))}))
            whole = False
        else:
            forms = tuple(sorted(spellings, key=lambda f: (-len(f), f)))  # the longest first: whole words
            whole = True
        out.append(Term(term, re.compile("|".join(map(re.escape, forms))), forms, whole))
    return out


def _stem(term: str) -> str:
    """The word without a regular ending (`committing` -> `commit`, `undone` stays)."""
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= _PREFIX_MIN_CHARS:
            stem = term[: -len(suffix)]
            if suffix in ("ing", "ed") and len(stem) > _PREFIX_MIN_CHARS and stem[-1] == stem[-2]:
                stem = stem[:-1]  # committ(ing) -> commit
            return stem
    return term


def units(body: str) -> list[Unit]:
    """The section's sentences, table rows and lines of code, in order; fences, rules, table
    delimiters and blank lines are not units."""
    return [sentence for block in blocks(body) for sentence in _sentences(block)]


@lru_cache(maxsize=BLOCKS_CACHED)
def _sentences(block: Unit) -> tuple[Unit, ...]:
    """A block's sentences (kept like the blocks: the same paragraphs are split again and again)."""
    if block.kind != Kind.PROSE:
        return (block,)
    text, start = block.text, 0
    out: list[Unit] = []
    for end in _SENTENCE_END.finditer(text):
        out.append(Unit(text[start:end.start(1)], Kind.PROSE))
        start = end.end(1)
    out.append(Unit(text[start:], Kind.PROSE))
    return tuple(out)


@lru_cache(maxsize=BLOCKS_CACHED)
def blocks(body: str) -> tuple[Unit, ...]:
    """The section as `units` reads it, a paragraph of prose (or a list item) still whole: its
    sentences are split only where a snippet needs them. Kept for the last `BLOCKS_CACHED`
    bodies: a query typed letter by letter, and a note's sections listed under it, show the same
    chunks again."""
    out: list[Unit] = []
    paragraph: list[str] = []
    in_fence = False
    after_blank = True

    def end_paragraph() -> None:
        if paragraph:
            text = " ".join(" ".join(paragraph).split())
            if text:
                out.append(_unit(text, Kind.PROSE))
            paragraph.clear()

    for raw in body.split("\n"):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            end_paragraph()
            after_blank = True
            continue
        first = stripped[0]
        if first in "`~" and _FENCE.match(line):
            end_paragraph()
            in_fence = not in_fence
            continue
        indented_code = after_blank and (line.startswith("    ") or line.startswith("\t")) and not paragraph
        after_blank = False
        if in_fence or indented_code:
            end_paragraph()
            out.append(_unit(" ".join(line.split()), Kind.DATA))
            continue
        if "|" in line and _TABLE_DELIMITER.match(line):
            end_paragraph()
            if out and out[-1].kind == Kind.DATA:
                # the row above is the table's header: named columns, shown only as a last resort
                out[-1] = Unit(out[-1].text, Kind.HEADING, out[-1].lowered)
            continue
        if first in "-=*_" and _RULE.match(line):
            end_paragraph()
            continue
        if first == "#":
            end_paragraph()
            out.append(_unit(" ".join(stripped.lstrip("#").split()), Kind.HEADING))
            continue
        if first == "|" or stripped.count("|") >= 2:
            end_paragraph()
            cells = (" ".join(cell.split()) for cell in stripped.strip("|").split("|"))
            out.append(_unit(" · ".join(cell for cell in cells if cell), Kind.DATA))
            continue
        if _looks_like_code(stripped):
            end_paragraph()
            out.append(_unit(" ".join(stripped.split()), Kind.DATA))
            continue
        text = _QUOTE.sub("", line) if first == ">" else line
        marker = _LIST_MARKER.match(text) if first in "-*+0123456789" else None
        if marker:
            end_paragraph()
            text = text[marker.end():]
        paragraph.append(text)
    end_paragraph()
    return tuple(out)


def _unit(text: str, kind: Kind) -> Unit:
    return Unit(text, kind, text.lower())


def _looks_like_code(line: str) -> bool:
    """More symbols than `_CODE_SYMBOL_SHARE` of the visible characters. A line that starts
    with a letter and ends with one or a stop, or that has none of the symbols of code and data
    (`_CODE_HINT`), is prose: it is not measured."""
    if (line[0].isalpha() and (line[-1].isalnum() or line[-1] in ".,:!?")) or not _CODE_HINT.search(line):
        return False
    visible = len(line.translate(_DROP_SPACE))
    return visible >= 8 and len(line) - len(line.translate(_DROP_SYMBOLS)) > _CODE_SYMBOL_SHARE * visible


def make_snippet(body: str, terms: Sequence[Term], width: int = SNIPPET_CHARS) -> str:
    """The best-matching sentence (or the opening sentence of prose) and the prose that follows,
    up to `width` characters, cut at a word with `…`."""
    found = blocks(body)
    if not found:
        return ""
    lowered_body = body.lower()
    held = [t for t in terms if t.in_text(lowered_body)]
    at, sentences, index = (_best(found, held) if held else None) or _fallback(found)
    line = sentences[index].text
    lowered = line.lower()
    starts = [start for t in held if (start := t.find(lowered)) >= 0]
    if starts and len(line) > width:
        start = max(0, min(starts) - width // 3)
        text = ("…" if start else "") + line[start:]
    elif sentences[index].kind == Kind.PROSE:
        rest = [u.text for u in sentences[index + 1:]]
        text = _words_up_to(line, chain(rest, _prose_after(found, at)), width)
    else:
        text = line
    if len(text) > width:
        cut = text[:width].rsplit(" ", 1)[0] if " " in text[:width] else text[:width]
        text = cut + "…"
    return text


def _prose_after(found: Sequence[Unit], at: int) -> Iterator[str]:
    """The prose of the blocks after `found[at]` up to the next heading: a chunk may hold several
    short sections, and the snippet stays in the one its sentence is from."""
    for unit in found[at + 1:]:
        if unit.kind == Kind.HEADING:
            return
        if unit.kind == Kind.PROSE:
            yield unit.text


#: where a snippet starts: the block's index, its sentences, the sentence's index among them.
_Place = tuple[int, Sequence[Unit], int]


def _best(found: Sequence[Unit], held: list[Term]) -> _Place | None:
    """The unit holding the most query words: a table row or code line needs more than every
    sentence, a heading never counts (the breadcrumb beside the snippet shows it); None when no
    unit holds one (a word split over two lines of a paragraph is found in neither)."""
    top, place = 0.0, None
    for at, block in enumerate(found):
        if block.kind == Kind.HEADING:
            continue
        lowered = block.lowered
        inside = [t for t in held if any(form in lowered for form in t.forms)]
        if not inside:
            continue  # (most blocks: one substring test per word)
        sentences = _sentences(block)
        penalty = 0.5 if block.kind == Kind.DATA else 0.0
        for index, sentence in enumerate(sentences):
            text = sentence.text.lower() if len(sentences) > 1 else lowered
            hits = sum(1 for t in inside if t.find(text) >= 0)
            if hits and hits - penalty > top:
                top, place = hits - penalty, (at, sentences, index)
    return place


def _fallback(found: Sequence[Unit]) -> _Place:
    """The opening sentence of prose (`_opening`), else the first row or line of code, else the
    first heading."""
    opening = _opening(found)
    if opening is not None:
        return opening
    for kind in (Kind.DATA, Kind.HEADING):
        at = next((i for i, u in enumerate(found) if u.kind == kind), None)
        if at is not None:
            return at, [found[at]], 0
    raise AssertionError("blocks are prose, data or headings")


def _opening(found: Sequence[Unit]) -> _Place | None:
    """The first sentence of prose that says something (`SUBSTANTIAL_WORDS` content words),
    among the first `OPENING_SENTENCES`; else the first sentence: "And this had done the
    trick!" opens many a section and tells nothing of it. None without prose."""
    seen: list[_Place] = []
    for at, block in enumerate(found):
        if block.kind != Kind.PROSE:
            continue
        sentences = _sentences(block)
        for index, sentence in enumerate(sentences):
            words = _CONTENT_WORD.findall(sentence.text.lower())
            if sum(1 for w in words if w not in STOPWORDS) >= SUBSTANTIAL_WORDS:
                return at, sentences, index
            seen.append((at, sentences, index))
            if len(seen) == OPENING_SENTENCES:
                return seen[0]
    return seen[0] if seen else None


def _words_up_to(first: str, following: Iterable[str], width: int) -> str:
    """`first` and the `following` units joined by one space, read until the text is longer
    than `width`: later units cannot change the first `width + 1` characters."""
    pieces = [first]
    size = len(first)
    for piece in following:
        if size > width:
            break
        pieces.append(piece)
        size += len(piece) + 1
    return " ".join(pieces)
