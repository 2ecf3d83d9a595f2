"""The store's read queries: files, chunks, links, tags, filters and lexical search.

`StoreReads` is one half of `kbls.storage.store.Store` (the other is `StoreWrites`); every
query runs on the calling thread's own connection, so readers never wait on each other.

`StoreReads` is one large class because it is the one place that holds the store's SELECTs (one
short method per query, SQL as templates); splitting it by table would spread the schema's
knowledge over several classes that all share one connection.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from kbls.links.forms import folder_keys, name_key, path_keys
from kbls.query.filters import Filters
from kbls.results import SqliteInfo
from kbls.storage import fts
from kbls.storage.connection import SQLITE, SQLITE_MODULE_NAME, ConnectionPool, OperationalError
from kbls.storage.filter_sql import Params, filter_sql
from kbls.storage.records import ChunkRow, FileChunk, FileRow, ListedFile, NoteName, StoreCounts, notes_by_name_key
from kbls.storage.schema import CHUNKING_KEY

log = logging.getLogger(__name__)

#: SQLite binds at most 999 variables in old builds: IN lists go in batches.
BATCH = 500
#: guards the first use of a store's `fts.DocCounts` (`StoreReads._doc_counts`).
_DOC_COUNTS_LOCK = threading.Lock()


class StoreReads:
    """Read queries over `self.db`."""

    db: ConnectionPool
    #: the remembered document counts (`fts.DocCounts`), made on first use.
    _doc_count_cache: fts.DocCounts | None = None
    #: `_note_keys` and the `notes_version` it was made at (replaced whole: threads read it freely).
    _note_keys_cache: tuple[tuple[int, int, float], dict[str, frozenset[int]]] | None = None

    def files(self, paths: Iterable[str] | None = None) -> dict[str, FileRow]:
        """Rows of every file, or of just `paths` (a save must not read 10k rows to update one)."""
        sql = "SELECT id, path, hash, size, mtime_ns, error FROM files"
        if paths is None:
            rows = self.db.conn.execute(sql).fetchall()
        else:
            wanted, rows = sorted(set(paths)), []
            for i in range(0, len(wanted), BATCH):
                batch = wanted[i : i + BATCH]
                marks = ",".join("?" * len(batch))
                rows += self.db.conn.execute(f"{sql} WHERE path IN ({marks})", batch).fetchall()
        return {r[1]: FileRow(*r) for r in rows}

    def known_embeddings(self, hashes: Iterable[str], *, pending: bool = False) -> set[str]:
        """The chunk texts of `hashes` with a stored vector (with `pending`, those waiting for one too)."""
        wanted = list(set(hashes))
        found: set[str] = set()
        waiting = "" if pending else " AND id NOT IN (SELECT embedding_id FROM pending_embeddings)"
        for i in range(0, len(wanted), BATCH):
            batch = wanted[i : i + BATCH]
            marks = ",".join("?" * len(batch))
            sql = f"SELECT hash FROM embeddings WHERE hash IN ({marks}){waiting}"
            found.update(r[0] for r in self.db.conn.execute(sql, batch))
        return found

    def counts(self) -> StoreCounts:
        c = self.db.conn
        return StoreCounts(
            files=int(c.execute("SELECT count(*) FROM files WHERE hash IS NOT NULL").fetchone()[0]),
            chunks=int(c.execute("SELECT count(*) FROM chunks").fetchone()[0]),
            vectors=int(c.execute("SELECT count(*) FROM embeddings").fetchone()[0])
            - int(c.execute("SELECT count(*) FROM pending_embeddings").fetchone()[0]),
            waiting=int(
                c.execute(
                    "SELECT count(*) FROM chunks WHERE embedding_id IN (SELECT embedding_id FROM pending_embeddings)"
                ).fetchone()[0]
            ),
        )

    def chunk_count(self) -> int:
        """Chunks in the store: the N of an inverse document frequency (remembered until the
        store changes, see `fts.DocCounts`)."""
        return self._doc_counts().chunk_count(self.db.conn)

    def errors(self) -> list[tuple[str, str]]:
        rows = self.db.conn.execute("SELECT path, error FROM files WHERE error IS NOT NULL ORDER BY path")
        return [(str(path), str(error)) for path, error in rows]

    def chunking(self) -> str | None:
        """The chunking fingerprint the last complete full scan recorded (None: never recorded,
        e.g. a store of an earlier kbls). See `kbls.indexing.chunk.Chunker.fingerprint`."""
        row = self.db.conn.execute("SELECT value FROM meta WHERE key = ?", (CHUNKING_KEY,)).fetchone()
        return None if row is None else str(row[0])

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                total += os.path.getsize(str(self.db.path) + suffix)
        return total

    def allowed_embeddings(self, filters: Filters) -> np.ndarray:
        rows = self._filtered(
            "SELECT DISTINCT c.embedding_id FROM chunks c JOIN files f ON f.id = c.file_id WHERE {where}", filters, {}
        )
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def chunks_for_embeddings(self, embedding_ids: list[int], filters: Filters) -> list[tuple[int, int]]:
        """(embedding_id, chunk rowid) pairs, filtered."""
        if not embedding_ids:
            return []
        params: Params = {f"e{i}": e for i, e in enumerate(embedding_ids)}
        marks = ",".join(f":e{i}" for i in range(len(embedding_ids)))
        rows = self._filtered(
            "SELECT c.embedding_id, c.id FROM chunks c JOIN files f ON f.id = c.file_id "
            f"WHERE c.embedding_id IN ({marks}) AND {{where}} ORDER BY c.id",
            filters,
            params,
        )
        return [(int(e), int(rowid)) for e, rowid in rows]

    def first_chunks_matching(self, filters: Filters, limit: int) -> list[int]:
        """The first chunk of each file the filters keep, by path: a query of filters only."""
        rows = self._filtered(
            "SELECT (SELECT c.id FROM chunks c WHERE c.file_id = f.id ORDER BY c.ord LIMIT 1) AS first "
            "FROM files f WHERE {where} AND first IS NOT NULL ORDER BY f.path LIMIT :limit",
            filters,
            {"limit": limit},
        )
        return [int(r[0]) for r in rows]

    def _filtered(self, sql: str, filters: Filters, params: Params) -> list[Any]:
        """The rows of `sql` with the filters' WHERE clause (over `f`, the files) at `{where}`."""
        return self.db.conn.execute(sql.format(where=filter_sql(filters, params)), params).fetchall()

    def lexical(self, match: str, filters: Filters, limit: int) -> list[tuple[int, float]]:
        """(chunk rowid, bm25) best first for an FTS5 MATCH expression (see `kbls.storage.fts`)."""
        params: Params = {"match": match, "limit": limit}
        where = None if filters.empty else filter_sql(filters, params)
        try:
            rows = self.db.conn.execute(fts.lexical_sql(where), params).fetchall()
        except OperationalError as exc:  # an FTS syntax error is a bad query, not a crash
            log.info("fts query %r failed: %s", match, exc)
            return []
        return [(int(rowid), float(rank)) for rowid, rank in rows]

    def term_doc_counts(self, terms: Iterable[str]) -> dict[str, int]:
        """How many chunks contain each term (FTS5 vocabulary), for planning a query; terms no
        chunk holds are left out. Remembered until the store changes (`fts.DocCounts`)."""
        conn = self.db.conn
        if not self.db.thread_flag("vocab"):
            conn.execute(fts.VOCAB_TABLE_SQL)
            self.db.set_thread_flag("vocab")
        return self._doc_counts().term_doc_counts(conn, terms)

    def lexical_generation(self) -> int | None:
        """Changes whenever the store does (`fts.DocCounts.generation`): lexical search remembers
        query words and which chunks hold them until then. None inside a write transaction."""
        return self._doc_counts().generation(self.db.conn)

    def _doc_counts(self) -> fts.DocCounts:
        """This store's `fts.DocCounts`, watching the store on a connection of its own."""
        counts = self._doc_count_cache
        if counts is None:
            with _DOC_COUNTS_LOCK:
                if self._doc_count_cache is None:
                    self._doc_count_cache = fts.DocCounts(self.db.open)
                counts = self._doc_count_cache
        return counts

    def chunk_rows(self, chunk_rowids: list[int]) -> dict[int, ChunkRow]:
        """The chunks of `chunk_rowids` that still exist (the indexer may have rewritten some)."""
        if not chunk_rowids:
            return {}
        marks = ",".join("?" * len(chunk_rowids))
        rows = self.db.conn.execute(
            f"SELECT c.id, f.path, c.start_line, c.end_line, c.breadcrumb, c.body, f.title, c.embedding_id, c.file_id, "
            f"coalesce(t.terms, '') FROM chunks c JOIN files f ON f.id = c.file_id "
            f"LEFT JOIN chunks_fts t ON t.rowid = c.id WHERE c.id IN ({marks})",
            chunk_rowids,
        ).fetchall()
        return {int(r[0]): ChunkRow(*r) for r in rows}

    def file_chunks(self, path: str) -> list[FileChunk]:
        """The chunks of one file, in file order; [] when it is not stored."""
        rows = self.db.conn.execute(
            "SELECT c.id, c.start_line, c.end_line, c.embedding_id, c.breadcrumb FROM chunks c "
            "JOIN files f ON f.id = c.file_id WHERE f.path = ? ORDER BY c.ord",
            (path,),
        ).fetchall()
        return [FileChunk(*r) for r in rows]

    def file_info(self, path: str) -> NoteName | None:
        row = self.db.conn.execute("SELECT id, path, title, aliases FROM files WHERE path = ?", (path,)).fetchone()
        return None if row is None else _note_name(*row)

    def files_sharing_tags(self, file_id: int) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for other, tag in self.db.conn.execute(
            "SELECT t2.file_id, t2.tag FROM tags t1 JOIN tags t2 ON t1.tag = t2.tag "
            "WHERE t1.file_id = ? AND t2.file_id != ?",
            (file_id, file_id),
        ):
            out.setdefault(other, []).append(tag)
        return out

    def outgoing_links(self, file_id: int) -> list[tuple[str, str]]:
        rows = self.db.conn.execute("SELECT kind, target FROM links WHERE file_id = ?", (file_id,))
        return [(str(kind), str(target)) for kind, target in rows]

    def resolve_link_targets(self, paths: list[str], names: list[str]) -> set[int]:
        """File ids that `path` links or `[[name]]` wiki links point at. A name is compared by
        `name_key` with each note's file stem and file name, path without and with its extension,
        title and aliases: in Python, as SQLite's lower() folds ASCII only and LIKE reads `_`/`%`."""
        ids: set[int] = set()
        for path in paths:
            ids.update(r[0] for r in self.db.conn.execute("SELECT id FROM files WHERE path = ?", (path,)))
        if names:
            by_key = self._note_keys()
            for name in names:
                ids.update(by_key.get(name_key(name), ()))
        return ids

    def _note_keys(self) -> dict[str, frozenset[int]]:
        """name key -> the notes that name is one of (see `resolve_link_targets`), made again
        when `notes_version` changes (~2 µs a note)."""
        version = self.notes_version()
        cached = self._note_keys_cache
        if cached is not None and cached[0] == version:
            return cached[1]
        by_key = notes_by_name_key(self.note_names())
        self._note_keys_cache = (version, by_key)
        return by_key

    def incoming_links(self, path: str, names: list[str]) -> set[int]:
        """Files linking the note at `path` by that path, or by a wiki link naming it by `names`
        or its file names (the index keeps wiki targets as their `name_key`)."""
        keys = sorted({name_key(n) for n in names} | set(path_keys(path)) | set(folder_keys(path)))
        params = [path, *keys]
        marks = ",".join("?" * len(keys))
        return {
            int(r[0])
            for r in self.db.conn.execute(
                f"SELECT DISTINCT file_id FROM links WHERE (kind = 'path' AND target = ?) "
                f"OR (kind = 'wiki' AND target IN ({marks}))",
                params,
            )
        }

    def note_names(self) -> list[NoteName]:
        """Every indexed note's path, title and aliases, by path (link completion's catalogue)."""
        rows = self.db.conn.execute(
            "SELECT id, path, title, aliases FROM files WHERE hash IS NOT NULL ORDER BY path"
        ).fetchall()
        return [_note_name(*row) for row in rows]

    def notes_version(self) -> tuple[int, int, float]:
        """(count, largest id, latest index time) of the files: changes whenever a note is
        added, removed or re-indexed, so a catalogue of `note_names` knows when to reload."""
        count, last, indexed = self.db.conn.execute(
            "SELECT count(*), coalesce(max(id), 0), coalesce(max(indexed_at), 0) FROM files"
        ).fetchone()
        return int(count), int(last), float(indexed)

    def chunk_files(self, chunk_rowids: list[int]) -> dict[int, int]:
        """chunk rowid -> its file id, for the chunks that still exist (no bodies read)."""
        out: dict[int, int] = {}
        for i in range(0, len(chunk_rowids), BATCH):
            batch = chunk_rowids[i : i + BATCH]
            marks = ",".join("?" * len(batch))
            out.update((int(r[0]), int(r[1])) for r in self.db.conn.execute(
                f"SELECT id, file_id FROM chunks WHERE id IN ({marks})", batch
            ))
        return out

    def files_linking(self, kind: str, limit: int) -> list[str]:
        """Paths of up to `limit` files holding links of `kind` ("wiki" or "path"), by path."""
        rows = self.db.conn.execute(
            "SELECT f.path FROM files f WHERE EXISTS "
            "(SELECT 1 FROM links l WHERE l.file_id = f.id AND l.kind = ?) ORDER BY f.path LIMIT ?",
            (kind, limit),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def first_chunk_of_files(self, file_ids: Iterable[int]) -> dict[int, int]:
        out = {}
        for fid in file_ids:
            row = self.db.conn.execute("SELECT id FROM chunks WHERE file_id = ? ORDER BY ord LIMIT 1", (fid,)).fetchone()
            if row:
                out[fid] = int(row[0])
        return out

    def tag_counts(self, prefix: str = "", skip: Sequence[str] = ()) -> list[tuple[str, int]]:
        """(tag, notes carrying it) for the tags starting with `prefix` (lowercase, no `#`),
        leaving out the notes under the root-relative folders `skip` (each ending in `/`).

        Only indexed notes have tags (a skipped file never gets any), so the `tags_tag` index
        answers with no join to `files`: ~6 ms for 50,000 tags of 10,000 notes, ~80 with the
        join (benchmarks/bench_listings.py)."""
        params: Params = {"low": prefix, "high": prefix + "\U0010ffff"}
        in_range = "t.tag >= :low AND t.tag < :high"
        sql = f"SELECT t.tag, count(*) FROM tags t WHERE {in_range} GROUP BY t.tag"
        counts = dict(self.db.conn.execute(sql, params).fetchall())
        if skip:
            # The notes under `skip` are few: count their tags apart and take them off. CROSS JOIN
            # makes SQLite read `files` first and each file's tags by the primary key (11 ms, not 77).
            under = " OR ".join(f"substr(f.path, 1, length(:skip{i})) = :skip{i}" for i in range(len(skip)))
            params.update({f"skip{i}": folder for i, folder in enumerate(skip)})
            for tag, count in self.db.conn.execute(
                f"SELECT t.tag, count(*) FROM files f CROSS JOIN tags t ON t.file_id = f.id WHERE ({under}) AND {in_range} "
                "GROUP BY t.tag",
                params,
            ):
                counts[tag] -= count
        rows = [(tag, count) for tag, count in counts.items() if count > 0]
        return [(str(tag), int(count)) for tag, count in rows]

    def first_chunk_bodies(self, file_ids: Iterable[int]) -> dict[int, str]:
        """file id -> the text of its first chunk; files without chunks are absent."""
        wanted = list(set(file_ids))
        out: dict[int, str] = {}
        for i in range(0, len(wanted), BATCH):
            batch = wanted[i : i + BATCH]
            marks = ",".join("?" * len(batch))
            rows = self.db.conn.execute(
                f"SELECT c.file_id, c.body, min(c.ord) FROM chunks c WHERE c.file_id IN ({marks}) GROUP BY c.file_id",
                batch,
            )
            out.update((int(fid), str(body)) for fid, body, _ in rows)
        return out

    def recent_files(self, filters: Filters, limit: int, skip: Sequence[str] = ()) -> tuple[list[ListedFile], int]:
        """Up to `limit` indexed notes the filters keep, most recently modified first (then by
        path), and how many notes they keep in all; notes under the folders `skip` left out."""
        params: Params = {"limit": limit}
        where = " AND ".join(["f.hash IS NOT NULL", filter_sql(filters, params), *_not_under(skip, params)])
        total = int(self.db.conn.execute(f"SELECT count(*) FROM files f WHERE {where}", params).fetchone()[0])
        rows = self.db.conn.execute(
            f"SELECT f.id, f.path, f.title, f.mtime_ns FROM files f WHERE {where} "
            "ORDER BY f.mtime_ns DESC, f.path LIMIT :limit",
            params,
        ).fetchall()
        return [ListedFile(int(i), str(path), str(title), int(mtime)) for i, path, title, mtime in rows], total

    def tags_of_files(self, file_ids: Iterable[int]) -> dict[int, list[str]]:
        """file id -> its tags, sorted; files without tags are absent."""
        wanted = list(set(file_ids))
        out: dict[int, list[str]] = {}
        for i in range(0, len(wanted), BATCH):
            batch = wanted[i : i + BATCH]
            marks = ",".join("?" * len(batch))
            for fid, tag in self.db.conn.execute(
                f"SELECT file_id, tag FROM tags WHERE file_id IN ({marks}) ORDER BY tag", batch
            ):
                out.setdefault(int(fid), []).append(str(tag))
        return out

    def sqlite_info(self) -> SqliteInfo:
        """Which SQLite module and versions serve this store (for `kbls status`)."""
        vec = self.db.conn.execute("SELECT vec_version()").fetchone()[0]
        return SqliteInfo(module=SQLITE_MODULE_NAME, version=str(SQLITE.sqlite_version), vec=str(vec))


def _not_under(folders: Sequence[str], params: Params) -> list[str]:
    """WHERE clauses over `f` (files) leaving out the files under each folder (ending in `/`)."""
    clauses = []
    for i, folder in enumerate(folders):
        params[f"skip{i}"] = folder
        clauses.append(f"substr(f.path, 1, length(:skip{i})) != :skip{i}")
    return clauses


def _note_name(file_id: int, path: str, title: str, aliases_json: str | None) -> NoteName:
    aliases = json.loads(aliases_json or "[]")
    names = tuple(str(a) for a in aliases) if isinstance(aliases, list) else ()
    return NoteName(int(file_id), str(path), str(title), names)
