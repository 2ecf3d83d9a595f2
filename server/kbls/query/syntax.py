"""Query syntax (`tag:rust path:notes/** type:md borrow checker`) and FTS5 query building."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kbls.limits import MAX_QUERY_CHARS
from kbls.query.filters import Filters
from kbls.query.globs import check_glob
from kbls.query.tokens import is_cjk, nfc, split_cjk

_FILTER = re.compile(r'(?<!\S)(tag|path|type):("[^"]*"|\S+)')
_WORD = re.compile(r"\w+", re.UNICODE)

#: FTS5 slows down with hundreds of OR terms; a long pasted paragraph keeps its first terms.
MAX_FTS_TERMS = 32


@dataclass(frozen=True)
class ParsedQuery:
    text: str
    filters: Filters


def parse_query(query: str, filters: Filters | None = None) -> ParsedQuery:
    """Take `tag:`, `path:` and `type:` terms out of the text and add them to `filters`.

    :raises QueryError: a `path:` glob that is not valid (see `kbls.query.globs`).
    """
    base = filters or Filters()
    paths, tags, types = list(base.paths), list(base.tags), list(base.types)
    for name, value in _FILTER.findall(query[:MAX_QUERY_CHARS]):
        value = value.strip('"')
        if not value:
            continue
        {"tag": tags, "path": paths, "type": types}[name].append(value)
    for pattern in paths:
        check_glob(pattern)  # a bad glob is a QueryError here, not an exception inside SQLite
    text = _FILTER.sub(" ", query[:MAX_QUERY_CHARS])
    return ParsedQuery(" ".join(text.split()), Filters(tuple(paths), tuple(tags), tuple(types)))


def query_terms(text: str) -> list[str]:
    """The query's words, composed (NFC) and lowercased, each once, in order; a run of CJK
    characters as the character bigrams the index holds (`kbls.query.tokens`)."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(nfc(text).lower()):
        for token in split_cjk(word):
            seen.setdefault(token, None)
    return list(seen)


#: English function words. When a query has other words these are left out of the lexical
#: query: a note must never rank first only because it shares "from" or "my" with the query
#: ("stop my plants from getting sick" ranked a note on concurrency first that way). A query of
#: function words only ("to be or not to be") keeps them.
STOPWORDS = frozenset(
    [
        "a", "about", "also", "am", "an", "and", "are", "as", "at", "be", "been", "being", "but", "by",
        "can", "could", "did", "do", "does", "doing", "for", "from", "had", "has", "have", "having", "he",
        "her", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "my", "no",
        "nor", "not", "of", "on", "or", "our", "she", "should", "so", "such", "than", "that", "the",
        "their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "us", "very",
        "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
        "with", "would", "you", "your",
    ]
)


def content_terms(text: str) -> list[str]:
    """The words that carry the query: its terms without function words, or every term when
    the query has nothing else; at most MAX_FTS_TERMS."""
    every = query_terms(text)
    return ([t for t in every if t not in STOPWORDS] or every)[:MAX_FTS_TERMS]


#: plural folding applies to words and forms of at least this many letters ("ms" -> "m" never).
MIN_FOLD_CHARS = 3
_SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh")


def number_forms(term: str) -> tuple[str, ...]:
    """The regular singular and plural spellings of an English word, other than itself
    (`trains` -> `train`; `train` -> `trains`; `buses` -> `bus`; `city` -> `cities`).

    Candidates only: the caller keeps those the notes contain (the index's vocabulary), so a
    spelling like `buse` never reaches a query. Folding on the query side instead of stemming the
    index: Porter stemming the index lost on the shared sets (docs/adr/0003-ranking.md)."""
    if len(term) < MIN_FOLD_CHARS or not term.isalpha() or is_cjk(term):
        return ()
    forms: list[str] = []
    if term.endswith("s") and not term.endswith(("ss", "us", "is")):
        forms.append(term[:-1])  # trains -> train, pages -> page
        if term.endswith("es") and term[:-2].endswith(_SIBILANT_ENDINGS):
            forms.append(term[:-2])  # buses -> bus, branches -> branch
        if term.endswith("ies"):
            forms.append(term[:-3] + "y")  # cities -> city
    if not term.endswith("s") or term.endswith(("ss", "us")):
        forms.append(term + "es" if term.endswith(_SIBILANT_ENDINGS) else term + "s")
        if term.endswith("y") and term[-2] not in "aeiou":
            forms.append(term[:-1] + "ies")
    return tuple(f for f in forms if f not in STOPWORDS and len(f) >= MIN_FOLD_CHARS)


def fts_match(text: str, forms: Mapping[str, Sequence[str]] | None = None) -> str:
    """An FTS5 MATCH expression: any content term (OR), ranked by BM25; a term also matches its
    other `forms` (singular/plural spellings the notes contain, see `number_forms`); the last
    term also as a prefix so a query typed character by character finds words still being typed."""
    terms = content_terms(text)
    if not terms:
        return ""
    known = forms or {}
    parts = []
    for term in terms:
        if len(term) == 1 and is_cjk(term):  # one CJK character: the bigrams it starts
            parts.append(f'"{term}"*')
            continue
        spellings = [f'"{t}"' for t in (term, *known.get(term, ()))]
        parts.append(spellings[0] if len(spellings) == 1 else f"({' OR '.join(spellings)})")
    # The query text arrives whitespace-normalised, so whether the user is still typing the
    # last word cannot be known: it is always matched as a prefix too (exact matches rank higher).
    every = query_terms(text)
    last = terms[-1]
    if len(last) >= 3 and last == every[-1]:
        spellings = [f'"{t}"' for t in (last, *known.get(last, ()))]
        parts[-1] = f'({" OR ".join(spellings)} OR "{last}"*)'
    return " OR ".join(parts)
