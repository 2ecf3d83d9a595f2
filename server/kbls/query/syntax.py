"""Query syntax (`tag:rust path:notes/** type:md borrow checker`) and FTS5 query building."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from kbls.query.filters import Filters

_FILTER = re.compile(r'(?<!\S)(tag|path|type):("[^"]*"|\S+)')
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_CHARS = 4096
#: FTS5 slows down with hundreds of OR terms; a long pasted paragraph keeps its first terms.
MAX_FTS_TERMS = 32


@dataclass(frozen=True)
class ParsedQuery:
    text: str
    filters: Filters


def parse_query(query: str, filters: Filters | None = None) -> ParsedQuery:
    """Take `tag:`, `path:` and `type:` terms out of the text and add them to `filters`."""
    base = filters or Filters()
    paths, tags, types = list(base.paths), list(base.tags), list(base.types)
    for name, value in _FILTER.findall(query[:MAX_QUERY_CHARS]):
        value = value.strip('"')
        if not value:
            continue
        {"tag": tags, "path": paths, "type": types}[name].append(value)
    text = _FILTER.sub(" ", query[:MAX_QUERY_CHARS])
    return ParsedQuery(" ".join(text.split()), Filters(tuple(paths), tuple(tags), tuple(types)))


def query_terms(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        seen.setdefault(word, None)
    return list(seen)


#: English function words. `Engine` leaves one out of the FTS query when it matches so many
#: chunks that scoring it would dominate the query's cost: at 50k chunks "spawn a thread and join
#: it" matched 38k chunks and took 75 ms instead of 1 ms. In such numbers BM25 gives it next to
#: no weight anyway; in a small store nothing is left out.
STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "too", "us", "was", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "would", "you", "your"]
)


def fts_match(text: str, drop: Collection[str] = ()) -> str:
    """An FTS5 MATCH expression: any term (OR), ranked by BM25; the last term also as a prefix
    so a query typed character by character finds words still being typed. Terms in `drop` are
    left out unless nothing else remains."""
    every = query_terms(text)
    terms = ([t for t in every if t not in drop] or every)[:MAX_FTS_TERMS]
    if not terms:
        return ""
    parts = [f'"{t}"' for t in terms]
    # The query text arrives whitespace-normalised, so whether the user is still typing the
    # last word cannot be known: it is always matched as a prefix too (exact matches rank higher).
    if len(terms[-1]) >= 3 and terms[-1] == every[-1]:
        parts[-1] = f'("{terms[-1]}" OR "{terms[-1]}"*)'
    return " OR ".join(parts)
