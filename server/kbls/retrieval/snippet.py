"""A short excerpt of a chunk for result lists: the sentence that best matches the query.

A section is read as units: the sentences of its prose (paragraphs and list items), and each
table row and line of code on its own. The shown unit is the one holding the most query words
(a word counts at the start of a word, in any of its forms: `commits` finds `commit` and
`committed`); a table row or a line of code must hold more of them than every sentence to be
chosen, so a raw row (`Last dirty commit | 4af64070 | d404ebd0`) or a dict dump is shown only
where the match is. With no query word in the section (a hit by meaning alone) its first
sentence of prose is shown. What follows the chosen sentence reads on as prose up to the width.

Every hit of every search gets one, so it stays cheap: the body is cut into units with one pass
over its lines, and only the query words the body holds are looked for unit by unit
(docs/benchmarks.md, "Snippets by sentence").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from kbls.query.syntax import STOPWORDS, content_terms, number_forms

SNIPPET_CHARS = 200
_FENCE = re.compile(r"^\s*(```|~~~)")
_RULE = re.compile(r"^\s*(-{3,}|={3,}|\*{3,}|_{3,})\s*$")
_TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
#: a sentence ends at `.`, `!`, `?` or `…` (with a closing quote or bracket) before a space and
#: a capital, a digit or an opening quote: "e.g. this" and "v1.2 is" stay whole.
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9À-ÖØ-Þ])")
#: characters that are rare in prose and everywhere in code, data dumps and markup.
_SYMBOLS = frozenset("{}[]()<>=;'\"`|\\$&*^~+@#%")
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


class Kind(Enum):
    PROSE = "prose"
    DATA = "data"  # a table row or a line of code: shown only where the match is
    HEADING = "heading"


@dataclass(frozen=True, slots=True)
class Unit:
    """One sentence, table row or line of code of a section, its spaces made single."""

    text: str
    kind: Kind


@dataclass(frozen=True, slots=True)
class Term:
    """A query word as the snippet looks for it: the pattern that finds any of its forms at the
    start of a word (the whole word for a short one)."""

    word: str
    pattern: re.Pattern[str]


def snippet_terms(text: str) -> list[Term]:
    """The content words of a query (function words only when it has nothing else), each
    matched at a word's start by its stem (`committing`, `commits` -> `commit`) and in its
    other number (`cities` -> `city`)."""
    out = []
    for term in content_terms(text):
        spellings = {term, *number_forms(term)}
        stem = _stem(term)
        if len(stem) >= _PREFIX_MIN_CHARS:
            alternatives = sorted({stem, *(s for s in spellings if not s.startswith(stem))})
            pattern = r"(?<!\w)(?:" + "|".join(map(re.escape, alternatives)) + ")"
        else:
            pattern = r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(spellings))) + r")(?!\w)"
        out.append(Term(term, re.compile(pattern)))
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
    out: list[Unit] = []
    paragraph: list[str] = []
    in_fence = False
    after_blank = True

    def end_paragraph() -> None:
        if paragraph:
            text = " ".join(" ".join(paragraph).split())
            out.extend(Unit(s, Kind.PROSE) for s in _SENTENCE_END.split(text) if s)
            paragraph.clear()

    for raw in body.split("\n"):
        line = raw.rstrip()
        if _FENCE.match(line):
            end_paragraph()
            in_fence = not in_fence
            continue
        if not line.strip():
            end_paragraph()
            after_blank = True
            continue
        indented_code = after_blank and (line.startswith("    ") or line.startswith("\t")) and not paragraph
        after_blank = False
        if in_fence or indented_code:
            end_paragraph()
            out.append(Unit(" ".join(line.split()), Kind.DATA))
            continue
        stripped = line.strip()
        if "|" in line and _TABLE_DELIMITER.match(line):
            end_paragraph()
            if out and out[-1].kind == Kind.DATA:
                # the row above is the table's header: named columns, shown only as a last resort
                out[-1] = Unit(out[-1].text, Kind.HEADING)
            continue
        if _RULE.match(line):
            end_paragraph()
            continue
        if stripped.startswith("#"):
            end_paragraph()
            out.append(Unit(" ".join(stripped.lstrip("#").split()), Kind.HEADING))
            continue
        if stripped.startswith("|") or stripped.count("|") >= 2:
            end_paragraph()
            cells = (" ".join(cell.split()) for cell in stripped.strip("|").split("|"))
            out.append(Unit(" · ".join(cell for cell in cells if cell), Kind.DATA))
            continue
        if _looks_like_code(stripped):
            end_paragraph()
            out.append(Unit(" ".join(stripped.split()), Kind.DATA))
            continue
        text = _QUOTE.sub("", line)
        marker = _LIST_MARKER.match(text)
        if marker:
            end_paragraph()
            text = text[marker.end():]
        paragraph.append(text)
    end_paragraph()
    return out


def _looks_like_code(line: str) -> bool:
    visible = [c for c in line if not c.isspace()]
    return len(visible) >= 8 and sum(c in _SYMBOLS for c in visible) > _CODE_SYMBOL_SHARE * len(visible)


def make_snippet(body: str, terms: Sequence[Term], width: int = SNIPPET_CHARS) -> str:
    """The best-matching sentence (or the first sentence of prose) and the prose that follows,
    up to `width` characters, cut at a word with `…`."""
    found = units(body)
    if not found:
        return ""
    best = _best(found, body, terms)
    chosen = found[best]
    line = chosen.text
    held = [t for t in terms if t.pattern.search(line.lower())] if terms else []
    if held and len(line) > width:
        lowered = line.lower()
        first = min(m.start() for t in held if (m := t.pattern.search(lowered)))
        start = max(0, first - width // 3)
        text = ("…" if start else "") + line[start:]
    elif chosen.kind == Kind.PROSE:
        following = (u.text for u in found[best + 1:] if u.kind == Kind.PROSE)
        text = _words_up_to(line, following, width)
    else:
        text = line
    if len(text) > width:
        cut = text[:width].rsplit(" ", 1)[0] if " " in text[:width] else text[:width]
        text = cut + "…"
    return text


def _best(found: list[Unit], body: str, terms: Sequence[Term]) -> int:
    """The index of the unit to show: the most query words (a table row or code line needs more
    than every sentence, a heading is shown only when nothing else is there), else the opening
    sentence of prose (`_opening`), else the first row or line of code, else the first heading."""
    first = {kind: next((i for i, u in enumerate(found) if u.kind == kind), None) for kind in Kind}
    prose = _opening(found) if first[Kind.PROSE] is not None else None
    fallback = next(i for i in (prose, first[Kind.DATA], first[Kind.HEADING]) if i is not None)
    if not terms:
        return fallback
    lowered_body = body.lower()
    held = [t for t in terms if t.pattern.search(lowered_body)]
    if not held:
        return fallback
    top, top_at = 0.0, -1
    for i, unit in enumerate(found):
        if unit.kind == Kind.HEADING:
            continue  # the breadcrumb beside the snippet shows it
        lowered = unit.text.lower()
        hits = sum(1 for t in held if t.pattern.search(lowered))
        score = hits - (0.5 if unit.kind == Kind.DATA else 0.0)
        if hits and score > top:
            top, top_at = score, i
    return top_at if top_at >= 0 else fallback


def _opening(found: list[Unit]) -> int:
    """The first sentence of prose that says something (`SUBSTANTIAL_WORDS` content words),
    among the first `OPENING_SENTENCES`; else the first sentence: "And this had done the
    trick!" opens many a section and tells nothing of it."""
    prose = [i for i, u in enumerate(found) if u.kind == Kind.PROSE]
    for i in prose[:OPENING_SENTENCES]:
        words = _CONTENT_WORD.findall(found[i].text.lower())
        if sum(1 for w in words if w not in STOPWORDS) >= SUBSTANTIAL_WORDS:
            return i
    return prose[0]


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
