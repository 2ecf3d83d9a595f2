"""The team store's reads of one root: files, chunks, links, tags and listings, as typed rows.

Each method is the Postgres form of the same method of `kbls.storage.reads.StoreReads` (same
arguments, same rows, same order); every query is scoped to the store's root.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence

import numpy as np

from kbls.links.forms import folder_keys, name_key, path_keys
from kbls.query.filters import Filters
from kbls.query.tokens import index_terms
from kbls.storage.postgres.connection import PgPool
from kbls.storage.postgres.filters import Params, filter_sql
from kbls.storage.postgres.paths import checked, clean_path, clean_path_sql
from kbls.storage.records import ChunkRow, FileChunk, FileRow, ListedFile, NoteName, StoreCounts, notes_by_name_key

_CHUNK_ROW = (
    "SELECT c.id, f.path, c.start_line, c.end_line, c.breadcrumb, c.body, f.title, c.embedding_id, c.file_id "
    "FROM chunks c JOIN files f ON f.id = c.file_id"
)


class PgReads:
    """Read queries of one root over `self.db`."""

    db: PgPool
    root_id: int
    _note_keys_cache: tuple[tuple[int, int, float], dict[str, frozenset[int]]] | None = None
    _keys_lock = threading.Lock()
    _counts_cache: tuple[int, StoreCounts] | None = None

    def files(self, paths: Iterable[str] | None = None) -> dict[str, FileRow]:
        sql = "SELECT id, path, hash, size, mtime_ns, error FROM files WHERE root_id = %s"
        if paths is None:
            rows = self.db.fetch(sql, (self.root_id,))
        else:
            rows = self.db.fetch(sql + " AND path = ANY(%s)", (self.root_id, sorted(set(paths))))
        rows = checked(rows, self.db.display)
        return {str(r[1]): FileRow(int(r[0]), str(r[1]), r[2], int(r[3]), int(r[4]), r[5]) for r in rows}

    def known_embeddings(self, hashes: Iterable[str], *, pending: bool = False) -> set[str]:
        return {str(r[0]) for r in self.db.fetch("SELECT hash FROM embeddings WHERE hash = ANY(%s)", (list(set(hashes)),))}

    def counts(self) -> StoreCounts:
        # A reader's status bar asks after every save, and the aggregates walk every chunk of the
        # root: kept until the root's revision moves (every write moves it, in its transaction).
        revision_row = self.db.one("SELECT revision FROM roots WHERE id = %s", (self.root_id,))
        revision = int(revision_row[0]) if revision_row else None
        kept = self._counts_cache
        if kept is not None and revision is not None and kept[0] == revision:
            return kept[1]
        # only the rows `checked` keeps: the status bar's count is the listing's total
        row = self.db.one(
            f"SELECT (SELECT count(*) FROM files WHERE root_id = %(r)s AND hash IS NOT NULL AND {clean_path_sql('path')}), "
            "c.n, c.v FROM (SELECT count(*) AS n, count(DISTINCT c.embedding_id) AS v FROM chunks c "
            f"JOIN files f ON f.id = c.file_id WHERE c.root_id = %(r)s AND {clean_path_sql('f.path')}) c",
            {"r": self.root_id},
        )
        assert row is not None
        counts = StoreCounts(files=int(row[0]), chunks=int(row[1]), vectors=int(row[2]))
        if revision is not None:
            self._counts_cache = (revision, counts)
        return counts

    def errors(self) -> list[tuple[str, str]]:
        rows = self.db.fetch(
            "SELECT path, error FROM files WHERE root_id = %s AND error IS NOT NULL ORDER BY path", (self.root_id,)
        )
        rows = checked(rows, self.db.display, 0)
        return [(str(p), str(e)) for p, e in rows]

    def chunking(self) -> str | None:
        row = self.db.one("SELECT chunking FROM roots WHERE id = %s", (self.root_id,))
        return None if row is None or row[0] is None else str(row[0])

    def _filtered(self, sql: str, filters: Filters, params: Params) -> list[tuple[object, ...]]:
        params["root"] = self.root_id
        return self.db.fetch(sql.format(where=filter_sql(filters, params)), params)

    def allowed_embeddings(self, filters: Filters) -> np.ndarray:
        rows = self._filtered(
            "SELECT DISTINCT c.embedding_id FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.root_id = %(root)s AND {where}",
            filters, {},
        )
        return np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))  # type: ignore[call-overload]

    def chunks_for_embeddings(self, embedding_ids: list[int], filters: Filters) -> list[tuple[int, int]]:
        if not embedding_ids:
            return []
        rows = self._filtered(
            "SELECT c.embedding_id, c.id FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE c.embedding_id = ANY(%(ids)s) AND c.root_id = %(root)s AND {where} ORDER BY c.id",
            filters, {"ids": embedding_ids},
        )
        return [(int(e), int(c)) for e, c in rows]  # type: ignore[call-overload]

    def first_chunks_matching(self, filters: Filters, limit: int) -> list[int]:
        rows = self._filtered(
            "SELECT first FROM (SELECT f.path, (SELECT c.id FROM chunks c WHERE c.file_id = f.id ORDER BY c.ord LIMIT 1) "
            "AS first FROM files f WHERE f.root_id = %(root)s AND {where}) AS t WHERE first IS NOT NULL "
            "ORDER BY path LIMIT %(limit)s",
            filters, {"limit": limit},
        )
        return [int(r[0]) for r in rows]  # type: ignore[call-overload]

    def chunk_rows(self, chunk_rowids: list[int]) -> dict[int, ChunkRow]:
        if not chunk_rowids:
            return {}
        rows = self.db.fetch(f"{_CHUNK_ROW} WHERE c.id = ANY(%s) AND c.root_id = %s", (chunk_rowids, self.root_id))
        # the FTS `terms` column SQLite keeps, made again here: lexical coverage reads a chunk's
        # identifier parts and CJK bigrams from it (breadcrumb, body and title are r[4], r[5], r[6])
        return {
            int(r[0]): ChunkRow._make((*r, index_terms(str(r[6]), str(r[4]), str(r[5]))))
            for r in checked(rows, self.db.display)
        }

    def file_chunks(self, path: str) -> list[FileChunk]:
        rows = self.db.fetch(
            "SELECT c.id, c.start_line, c.end_line, c.embedding_id, c.breadcrumb FROM chunks c "
            "JOIN files f ON f.id = c.file_id WHERE f.root_id = %s AND f.path = %s ORDER BY c.ord",
            (self.root_id, path),
        )
        return [FileChunk(*r) for r in rows]

    def file_info(self, path: str) -> NoteName | None:
        row = self.db.one(
            "SELECT id, path, title, aliases FROM files WHERE root_id = %s AND path = %s", (self.root_id, path)
        )
        return None if row is None or not checked([row], self.db.display) else _note_name(*row)

    def files_sharing_tags(self, file_id: int) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for other, tag in self.db.fetch(
            "SELECT t2.file_id, t2.tag FROM tags t1 JOIN tags t2 ON t1.tag = t2.tag JOIN files f ON f.id = t2.file_id "
            "WHERE t1.file_id = %s AND t2.file_id != %s AND f.root_id = %s",
            (file_id, file_id, self.root_id),
        ):
            out.setdefault(int(other), []).append(str(tag))
        return out

    def outgoing_links(self, file_id: int) -> list[tuple[str, str]]:
        rows = self.db.fetch("SELECT kind, target FROM links WHERE file_id = %s", (file_id,))
        # a path link's target is root-relative as the indexer resolves it: checked as a file's path is
        return [(str(k), str(t)) for k, t in rows if k != "path" or clean_path(t)]

    def resolve_link_targets(self, paths: list[str], names: list[str]) -> set[int]:
        ids = {
            int(r[0])
            for r in self.db.fetch("SELECT id FROM files WHERE root_id = %s AND path = ANY(%s)", (self.root_id, paths))
        } if paths else set()
        if names:
            by_key = self._note_keys()
            for name in names:
                ids.update(by_key.get(name_key(name), ()))
        return ids

    def _note_keys(self) -> dict[str, frozenset[int]]:
        version = self.notes_version()
        cached = self._note_keys_cache
        if cached is not None and cached[0] == version:
            return cached[1]
        by_key = notes_by_name_key(self.note_names())
        self._note_keys_cache = (version, by_key)
        return by_key

    def incoming_links(self, path: str, names: list[str]) -> set[int]:
        keys = sorted({name_key(n) for n in names} | set(path_keys(path)) | set(folder_keys(path)))
        rows = self.db.fetch(
            "SELECT DISTINCT l.file_id FROM links l JOIN files f ON f.id = l.file_id WHERE f.root_id = %s AND "
            "((l.kind = 'path' AND l.target = %s) OR (l.kind = 'wiki' AND l.target = ANY(%s)))",
            (self.root_id, path, keys),
        )
        return {int(r[0]) for r in rows}

    def note_names(self) -> list[NoteName]:
        rows = self.db.fetch(
            "SELECT id, path, title, aliases FROM files WHERE root_id = %s AND hash IS NOT NULL ORDER BY path",
            (self.root_id,),
        )
        return [_note_name(*r) for r in checked(rows, self.db.display)]

    def notes_version(self) -> tuple[int, int, float]:
        row = self.db.one(
            "SELECT count(*), coalesce(max(id), 0), coalesce(max(indexed_at), 0) FROM files WHERE root_id = %s",
            (self.root_id,),
        )
        assert row is not None
        return int(row[0]), int(row[1]), float(row[2])

    def chunk_files(self, chunk_rowids: list[int]) -> dict[int, int]:
        rows = self.db.fetch(
            "SELECT id, file_id FROM chunks WHERE id = ANY(%s) AND root_id = %s", (chunk_rowids, self.root_id)
        )
        return {int(i): int(f) for i, f in rows}

    def files_linking(self, kind: str, limit: int) -> list[str]:
        rows = self.db.fetch(
            "SELECT f.path FROM files f WHERE f.root_id = %s AND EXISTS "
            "(SELECT 1 FROM links l WHERE l.file_id = f.id AND l.kind = %s) ORDER BY f.path LIMIT %s",
            (self.root_id, kind, limit),
        )
        return [str(r[0]) for r in checked(rows, self.db.display, 0)]

    def first_chunk_of_files(self, file_ids: Iterable[int]) -> dict[int, int]:
        rows = self.db.fetch(
            "SELECT DISTINCT ON (file_id) file_id, id FROM chunks WHERE file_id = ANY(%s) AND root_id = %s "
            "ORDER BY file_id, ord",
            (list(file_ids), self.root_id),
        )
        return {int(f): int(i) for f, i in rows}

    def first_chunk_bodies(self, file_ids: Iterable[int]) -> dict[int, str]:
        rows = self.db.fetch(
            "SELECT DISTINCT ON (file_id) file_id, body FROM chunks WHERE file_id = ANY(%s) AND root_id = %s "
            "ORDER BY file_id, ord",
            (list(set(file_ids)), self.root_id),
        )
        return {int(f): str(b) for f, b in rows}

    def tag_counts(self, prefix: str = "", skip: Sequence[str] = ()) -> list[tuple[str, int]]:
        params: Params = {"root": self.root_id, "low": prefix, "high": prefix + "\U0010ffff"}
        clauses = [f"NOT starts_with(f.path, %(skip{i})s)" for i in range(len(skip))]
        params.update({f"skip{i}": folder for i, folder in enumerate(skip)})
        where = " AND ".join(["f.root_id = %(root)s", "t.tag >= %(low)s", "t.tag < %(high)s", clean_path_sql("f.path"), *clauses])
        rows = self.db.fetch(
            f"SELECT t.tag, count(*) FROM tags t JOIN files f ON f.id = t.file_id WHERE {where} GROUP BY t.tag ORDER BY t.tag",
            params,
        )
        return [(str(t), int(n)) for t, n in rows]

    def recent_files(self, filters: Filters, limit: int, skip: Sequence[str] = ()) -> tuple[list[ListedFile], int]:
        params: Params = {"limit": limit, "root": self.root_id}
        skips = [f"NOT starts_with(f.path, %(skip{i})s)" for i in range(len(skip))]
        params.update({f"skip{i}": folder for i, folder in enumerate(skip)})
        # the total counts what the listing hands out: rows `checked` would leave out are not counted
        where = " AND ".join(
            ["f.root_id = %(root)s", "f.hash IS NOT NULL", clean_path_sql("f.path"), filter_sql(filters, params), *skips]
        )
        total = self.db.one(f"SELECT count(*) FROM files f WHERE {where}", params)
        rows = self.db.fetch(
            f"SELECT f.id, f.path, f.title, f.mtime_ns FROM files f WHERE {where} "
            "ORDER BY f.mtime_ns DESC, f.path LIMIT %(limit)s",
            params,
        )
        listed = [ListedFile(int(i), str(p), str(t), int(m)) for i, p, t, m in checked(rows, self.db.display)]
        return listed, int(total[0]) if total else 0

    def tags_of_files(self, file_ids: Iterable[int]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for fid, tag in self.db.fetch(
            "SELECT file_id, tag FROM tags WHERE file_id = ANY(%s) ORDER BY tag", (list(set(file_ids)),)
        ):
            out.setdefault(int(fid), []).append(str(tag))
        return out


def _note_name(file_id: int, path: str, title: str, aliases_json: str | None) -> NoteName:
    aliases = json.loads(aliases_json or "[]")
    names = tuple(str(a) for a in aliases) if isinstance(aliases, list) else ()
    return NoteName(int(file_id), str(path), str(title), names)
