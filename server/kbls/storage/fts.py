"""The full-text side of the store: the FTS5 table, its tokenizer and column weights, and the
lexical-search SQL. Lexical ranking is tuned here and nowhere else.

`chunks_fts` is an FTS5 table of its own (not external-content): its rowid is the chunk's rowid
in `chunks`, and the writer keeps the two in step inside one transaction (`Store.write_note`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kbls.storage.connection import Connection

#: the FTS5 table; its columns are weighted by `BM25_WEIGHTS` in that order.
FTS_TABLE_SQL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5("
    "title, breadcrumb, body, tokenize = 'unicode61 remove_diacritics 0')"
)
#: bm25() weights of title, breadcrumb, body: a word in a title or heading weighs more.
BM25_WEIGHTS = (4.0, 2.0, 1.0)
_BM25 = f"bm25(chunks_fts, {', '.join(map(str, BM25_WEIGHTS))})"

INSERT_SQL = "INSERT INTO chunks_fts(rowid, title, breadcrumb, body) VALUES (?, ?, ?, ?)"
DELETE_FILE_SQL = "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)"


#: (chunk rowid, bm25) best first for `:match`, at most `:limit`. Without filters the joins only
#: cost: SQLite would join every matching chunk before sorting (82 ms instead of 36 ms for 32k
#: matches at 50k chunks).
_LEXICAL_SQL = f"SELECT rowid, {_BM25} AS rank FROM chunks_fts WHERE chunks_fts MATCH :match ORDER BY rank LIMIT :limit"
_FILTERED_LEXICAL_SQL = (
    f"SELECT chunks_fts.rowid, {_BM25} AS rank "
    "FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid JOIN files f ON f.id = c.file_id "
    "WHERE chunks_fts MATCH :match AND {where} ORDER BY rank LIMIT :limit"
)


def lexical_sql(where: str | None) -> str:
    """(chunk rowid, bm25) best first for `:match`, at most `:limit`; `where` filters over
    `f` (files) and `c` (chunks), None for no filter."""
    return _LEXICAL_SQL if where is None else _FILTERED_LEXICAL_SQL.format(where=where)


#: a temp table: per connection, so nothing is written to the store file.
VOCAB_TABLE_SQL = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.kb_vocab USING fts5vocab(main, chunks_fts, 'row')"


def term_doc_counts(conn: Connection, terms: Iterable[str]) -> dict[str, int]:
    """How many chunks contain each term; `VOCAB_TABLE_SQL` must have run on `conn`."""
    wanted = sorted(set(terms))
    if not wanted:
        return {}
    marks = ",".join("?" * len(wanted))
    rows: list[Any] = conn.execute(f"SELECT term, doc FROM temp.kb_vocab WHERE term IN ({marks})", wanted).fetchall()
    return {str(term): int(doc) for term, doc in rows}
