"""The full-text side of the store: the FTS5 table, its tokenizer and column weights, and the
lexical-search SQL. Lexical ranking is tuned here and nowhere else.

`chunks_fts` is an FTS5 table of its own (not external-content): its rowid is the chunk's rowid
in `chunks`, and the writer keeps the two in step inside one transaction (`Store.write_note`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from kbls.query.tokens import index_terms, nfc
from kbls.storage.connection import SQLITE, Connection

#: the FTS5 table; its columns are weighted by `BM25_WEIGHTS` in that order. `terms` holds the
#: tokens unicode61 does not make of the other three (`kbls.query.tokens.index_terms`: CamelCase
#: parts, CJK bigrams). Diacritics are kept: `thuế` is not `thue`, `résumé` not `resume`.
FTS_TABLE_SQL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5("
    "title, breadcrumb, body, terms, tokenize = 'unicode61 remove_diacritics 0')"
)
#: bm25() weights of title, breadcrumb, body, terms: a word in a title or heading weighs more.
BM25_WEIGHTS = (4.0, 2.0, 1.0, 1.0)
_BM25 = f"bm25(chunks_fts, {', '.join(map(str, BM25_WEIGHTS))})"

INSERT_SQL = "INSERT INTO chunks_fts(rowid, title, breadcrumb, body, terms) VALUES (?, ?, ?, ?, ?)"


def insert_chunk(c: Connection, rowid: int, title: str, breadcrumb: str, body: str) -> None:
    """Index one chunk's texts (composed: `nfc`) and the extra tokens made of them under its rowid."""
    title, breadcrumb, body = nfc(title), nfc(breadcrumb), nfc(body)
    c.execute(INSERT_SQL, (rowid, title, breadcrumb, body, index_terms(title, breadcrumb, body)))


def rebuild_with_terms(c: Connection) -> None:
    """Recreate the FTS table of a store whose table has no `terms` column, from the texts it
    holds (nothing is read from the notes, nothing embedded)."""
    rows: list[Any] = c.execute("SELECT rowid, title, breadcrumb, body FROM chunks_fts").fetchall()
    c.execute("DROP TABLE chunks_fts")
    c.execute(FTS_TABLE_SQL)
    for rowid, title, breadcrumb, body in rows:
        insert_chunk(c, int(rowid), str(title), str(breadcrumb), str(body))


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


def chunk_count(conn: Connection) -> int:
    """Chunks in the store: the N of an inverse document frequency."""
    return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])


#: `DocCounts` keeps the counts of at most this many terms, then starts afresh (search-as-you-type
#: asks for every prefix of a word being typed: the set only grows until the store changes).
DOC_COUNTS_KEPT = 20_000


class DocCounts:
    """The store's chunk count and the document counts of the terms asked for, remembered until
    the store changes. Counting a term walks its whole posting list (fts5vocab): about 0.35 ms a
    query at 50k chunks, spent again on every keystroke of search-as-you-type for the same words.

    The counts hold while `PRAGMA data_version` on a connection of their own (`open_watch`) that
    never writes, is unchanged: it changes with every commit by any other connection, this process's
    writer and another process's (`kbls index` beside a daemon) alike. Counts read inside a
    write transaction (uncommitted rows) are neither taken from nor put in the cache. A store
    file replaced under its `Store` (`kbls index --rebuild`) is read through a new `Store`,
    with counts of its own."""

    def __init__(self, open_watch: Callable[[], Connection]) -> None:
        self._open_watch = open_watch
        self._watch: Connection | None = None
        self._lock = threading.Lock()
        self._version: int | None = None
        self._docs: dict[str, int] = {}
        self._chunks: int | None = None
        #: counts every change seen (and every new watch): see `generation`.
        self._generation = 0

    def _version_now(self) -> int:
        """The store's version now; forgets every count when it moved. Call under `_lock`."""
        if self._watch is not None:
            try:
                version = int(self._watch.execute("PRAGMA data_version").fetchone()[0])
            except SQLITE.ProgrammingError:  # closed with the store's connections: watch anew
                self._watch = None
        if self._watch is None:
            # A new connection's versions are not comparable to the old one's: forget all.
            self._watch, self._version = self._open_watch(), None
            version = int(self._watch.execute("PRAGMA data_version").fetchone()[0])
        if version != self._version:
            self._version, self._docs, self._chunks = version, {}, None
            self._generation += 1
        return version

    def generation(self, conn: Connection) -> int | None:
        """A number that stays the same while the store does and changes with every commit seen,
        for other things a searcher remembers until the store changes (`retrieval.lexical`);
        None while `conn` is inside a write transaction (its uncommitted rows are not the store)."""
        if conn.in_transaction:
            return None
        with self._lock:
            self._version_now()
            return self._generation

    def chunk_count(self, conn: Connection) -> int:
        """`chunk_count` read on `conn` (this thread's connection), or remembered."""
        if conn.in_transaction:
            return chunk_count(conn)
        with self._lock:
            version, known = self._version_now(), self._chunks
        if known is not None:
            return known
        count = chunk_count(conn)
        with self._lock:
            if self._version == version:  # (a later commit makes the next call count again)
                self._chunks = count
        return count

    def term_doc_counts(self, conn: Connection, terms: Iterable[str]) -> dict[str, int]:
        """`term_doc_counts` read on `conn` for the terms not remembered: the terms held by
        some chunk, with their counts."""
        wanted = set(terms)
        if conn.in_transaction:
            return term_doc_counts(conn, wanted)
        with self._lock:
            version = self._version_now()
            known = {term: self._docs[term] for term in wanted if term in self._docs}
        missing = wanted.difference(known)
        if missing:
            found = term_doc_counts(conn, missing)
            counted = {term: found.get(term, 0) for term in missing}
            known.update(counted)
            with self._lock:
                if self._version == version:
                    if len(self._docs) + len(counted) > DOC_COUNTS_KEPT:
                        self._docs = {}
                    self._docs.update(counted)
        return {term: count for term, count in known.items() if count}
