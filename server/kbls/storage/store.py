"""The SQLite store of one workspace root: files, chunks, vectors (sqlite-vec), FTS5, links, tags.

SQL lives here and nowhere else. One file per root, WAL mode, so readers never wait behind the
single writer; a cross-process file lock makes sure only one process writes at a time. Each
file's update is one transaction: a crash leaves the old chunks or the new ones, never half.
Vectors are content-addressed by chunk-text hash (`embeddings`), so a moved, renamed or copied
note re-embeds nothing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from textwrap import dedent
from typing import Any

import numpy as np

from kbls.errors import CorruptStoreError, ModelMismatchError, StoreBusyError, StoreError, StoreFullError

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
STORE_FILE = "kbls.sqlite3"
LOCK_FILE = "writer.lock"
BUSY_MESSAGE = (
    "the store {path} is busy: another process has been writing it for over 30 s "
    "(a stopped `kbls index`?); try again once it has finished"
)


def _sqlite_module() -> tuple[Any, str]:
    """The stdlib sqlite3 when it can load extensions, else sqlean.py (bundled SQLite + FTS5)."""
    probe = sqlite3.connect(":memory:")
    try:
        if hasattr(probe, "enable_load_extension"):
            return sqlite3, "sqlite3"
    finally:
        probe.close()
    import sqlean

    return sqlean, "sqlean"


SQLITE, SQLITE_MODULE_NAME = _sqlite_module()


def glob_to_regex(pattern: str) -> str:
    """Glob with `**` (any folders), `*`, `?`; a plain folder name matches what is under it, and
    a pattern without `/` matches file names at any depth."""
    pattern = pattern.strip().lstrip("./") if pattern.startswith("./") else pattern.strip().lstrip("/")
    if not any(c in pattern for c in "*?["):
        folder = re.escape(pattern.rstrip("/"))
        return rf"^{folder}(/.*)?$"
    tokens: list[tuple[str, str]] = []  # (kind, regex); kind: lit, star, deep or deepdir
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            tokens.append(("deepdir", "(?:.*/)?"))
            i += 3
            continue
        if pattern.startswith("**", i):
            tokens.append(("deep", ".*"))
            i += 2
            continue
        if ch == "*":
            tokens.append(("star", "[^/]*"))
        elif ch == "?":
            tokens.append(("lit", "[^/]"))
        else:
            tokens.append(("lit", re.escape(ch)))
        i += 1
    out = []
    j = 0
    while j < len(tokens):
        kind, rx = tokens[j]
        k = j + 1
        while k < len(tokens) and tokens[k][0] == "lit":
            k += 1
        if kind in ("star", "deep") and k > j + 1 and k < len(tokens) and tokens[k][0] == kind:
            # "*SEG*" ("**SEG**"): take SEG at its first place, atomically (lookahead plus
            # backreference, as fnmatch does), so a filter like `*?*?*?*?x` cannot make the
            # regex try every split of a path (catastrophic backtracking hung the search
            # thread). The first place is right because the next wildcard skips as far.
            seg = "".join(rx for _, rx in tokens[j + 1 : k])
            body = "[^/]" if kind == "star" else "."
            out.append(f"(?=(?P<g{j}>{body}*?{seg}))(?P=g{j})")
            j = k
            continue
        out.append(rx)
        j += 1
    # As in .gitignore: a pattern without a slash (`*.md`) matches a file name at any depth.
    anywhere = "(?:.*/)?" if "/" not in pattern else ""
    return "^" + anywhere + "".join(out) + "$"


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(glob_to_regex(pattern))


def _sql_glob(pattern: str, path: str) -> int:
    return 1 if _compiled(pattern).match(path) else 0


def _cannot_write(exc: Exception) -> bool:
    """A full (or failing) disk: the store is fine and must not be taken for a damaged one."""
    return "disk is full" in str(exc) or "disk I/O error" in str(exc)


def _busy(exc: Exception) -> bool:
    """Another process held the write lock past the busy timeout (e.g. a stopped `kbls index`)."""
    return "database is locked" in str(exc) or "database is busy" in str(exc)


SCHEMA = dedent(
    """
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        hash TEXT,
        size INTEGER NOT NULL DEFAULT 0,
        mtime_ns INTEGER NOT NULL DEFAULT 0,
        title TEXT NOT NULL DEFAULT '',
        kind TEXT NOT NULL DEFAULT 'md',
        stem TEXT NOT NULL DEFAULT '',  -- lowercased file name without extension, for [[wiki]] links
        note_type TEXT,
        aliases TEXT NOT NULL DEFAULT '[]',
        error TEXT,
        indexed_at REAL NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS files_title ON files(lower(title));
    CREATE TABLE IF NOT EXISTS embeddings (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        hash TEXT NOT NULL UNIQUE
    );
    CREATE TABLE IF NOT EXISTS chunks (
        id INTEGER PRIMARY KEY,
        chunk_id TEXT NOT NULL UNIQUE,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        ord INTEGER NOT NULL,
        hash TEXT NOT NULL,
        embedding_id INTEGER NOT NULL REFERENCES embeddings(id),
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        breadcrumb TEXT NOT NULL,
        body TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
    CREATE INDEX IF NOT EXISTS chunks_embedding ON chunks(embedding_id);
    CREATE TABLE IF NOT EXISTS tags (
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        PRIMARY KEY (file_id, tag)
    );
    CREATE INDEX IF NOT EXISTS tags_tag ON tags(tag);
    CREATE TABLE IF NOT EXISTS links (
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        target TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS links_file ON links(file_id);
    CREATE INDEX IF NOT EXISTS links_target ON links(target);
    CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
        title, breadcrumb, body, tokenize = 'unicode61 remove_diacritics 0'
    );
    """
)


def file_stem(path: str) -> str:
    """Lowercased file name without extension: what a `[[wiki link]]` names."""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()


def _migrate_1_to_2(c: Any) -> None:
    """v2 added `files.stem`, so `[[wiki]]` links resolve through an index."""
    columns = {row[1] for row in c.execute("PRAGMA table_info(files)")}
    if "stem" not in columns:  # development builds of v1 already had it
        c.execute("ALTER TABLE files ADD COLUMN stem TEXT NOT NULL DEFAULT ''")
    rows = c.execute("SELECT id, path FROM files").fetchall()
    c.executemany("UPDATE files SET stem = ? WHERE id = ?", [(file_stem(path), fid) for fid, path in rows])


#: from-version -> step to the next version; each runs in the transaction that records it.
MIGRATIONS = {1: _migrate_1_to_2}
#: indexes on columns that migrations add: created once the migrations ran.
POST_MIGRATION_SQL = ("CREATE INDEX IF NOT EXISTS files_stem ON files(stem)",)

@dataclass(frozen=True)
class FileRow:
    id: int
    path: str
    hash: str | None
    size: int
    mtime_ns: int
    error: str | None


@dataclass(frozen=True)
class ChunkRecord:
    """A chunk ready to be written: its vector is stored already or passed in `vectors`."""

    chunk_id: str
    ord: int
    hash: str
    start_line: int
    end_line: int
    breadcrumb: str
    body: str


@dataclass(frozen=True)
class NoteRecord:
    path: str
    hash: str
    size: int
    mtime_ns: int
    title: str
    kind: str
    note_type: str | None
    aliases: list[str]
    tags: list[str]
    links: list[tuple[str, str]]
    chunks: list[ChunkRecord]
    warning: str | None


@dataclass(frozen=True)
class Filters:
    paths: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    types: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.paths or self.tags or self.types)


def _filter_sql(filters: Filters, params: dict[str, Any]) -> str:
    """WHERE clauses over `f` (files) for the filters, binding values into `params`."""
    clauses = []
    if filters.paths:
        ors = []
        for i, pattern in enumerate(filters.paths):
            params[f"path{i}"] = pattern
            ors.append(f"kb_glob(:path{i}, f.path)")
        clauses.append("(" + " OR ".join(ors) + ")")
    for i, tag in enumerate(filters.tags):
        params[f"tag{i}"] = tag.lower().lstrip("#")
        clauses.append(f"f.id IN (SELECT file_id FROM tags WHERE tag = :tag{i})")
    if filters.types:
        names = []
        for i, kind in enumerate(filters.types):
            params[f"type{i}"] = kind.lower().lstrip(".")
            names.append(f":type{i}")
        joined = ", ".join(names)
        clauses.append(f"(lower(f.note_type) IN ({joined}) OR f.kind IN ({joined}))")
    return " AND ".join(clauses) if clauses else "1"


class WriterLock:
    """A cross-process lock (flock) so that one process at a time writes a store."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle = None
        self._thread_lock = threading.Lock()

    @contextlib.contextmanager
    def hold(self, timeout: float | None = None) -> Iterator[bool]:
        """Yield True once the lock is held; False if `timeout` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._thread_lock.acquire(timeout=-1 if timeout is None else timeout):
            yield False
            return
        try:
            handle = open(self.path, "a+b")
            try:
                import fcntl
            except ImportError:  # Windows: one process per store is the documented limit
                fcntl = None
            while fcntl is not None:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if deadline is not None and time.monotonic() > deadline:
                        handle.close()
                        yield False
                        return
                    time.sleep(0.05)
            try:
                yield True
            finally:
                handle.close()  # closing releases the flock
        finally:
            self._thread_lock.release()


class Store:
    """One root's SQLite store. `Store` methods are safe from several threads: each thread that
    reads gets its own connection, writes go through one writer connection."""

    def __init__(
        self, directory: Path, *, model_id: str, dimension: int, model_sha256: str | None, check: bool = False
    ) -> None:
        self.directory = directory
        self.path = directory / STORE_FILE
        self.model_id = model_id
        self.dimension = dimension
        self.model_sha256 = model_sha256
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store directory {directory}: {exc.strerror}") from None
        self.lock = WriterLock(directory / LOCK_FILE)
        self._local = threading.local()
        self._connections: list[Any] = []
        self._conn_lock = threading.Lock()
        self._write_lock = threading.RLock()
        self._init_schema(check)

    # -- connections -------------------------------------------------------------------------
    def _connect(self) -> Any:
        try:
            conn = SQLITE.connect(str(self.path), timeout=30.0, check_same_thread=False, isolation_level=None)
            conn.enable_load_extension(True)
            import sqlite_vec

            sqlite_vec.load(conn)
            conn.enable_load_extension(False)
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.create_function("kb_glob", 2, _sql_glob, deterministic=True)
        except SQLITE.DatabaseError as exc:
            if _cannot_write(exc):
                raise StoreFullError(f"cannot write the store {self.path}: {exc}") from None
            raise CorruptStoreError(f"cannot open the store {self.path}: {exc}") from None
        with self._conn_lock:
            self._connections.append(conn)
        return conn

    @property
    def conn(self) -> Any:
        """This thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    def close(self) -> None:
        with self._conn_lock:
            for conn in self._connections:
                with contextlib.suppress(Exception):
                    conn.close()
            self._connections.clear()
        self._local = threading.local()

    @contextlib.contextmanager
    def atomic(self) -> Iterator[Any]:
        """One write transaction (BEGIN IMMEDIATE: take the write lock up front, no upgrade deadlock)."""
        with self._write_lock:
            conn = self.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    # On a full disk SQLite may have rolled back already; a second ROLLBACK
                    # would raise and hide the real error.
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except SQLITE.OperationalError as exc:
                if _cannot_write(exc):
                    raise StoreFullError(f"cannot write the store {self.path}: {exc}") from None
                if _busy(exc):
                    raise StoreBusyError(BUSY_MESSAGE.format(path=self.path)) from None
                raise

    # -- schema ------------------------------------------------------------------------------
    def _init_schema(self, check: bool) -> None:
        conn = self.conn
        try:
            if check and self.path.exists() and self.path.stat().st_size > 0:
                result = conn.execute("PRAGMA quick_check").fetchone()[0]
                if result != "ok":
                    raise CorruptStoreError(f"the store {self.path} is damaged ({result})")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                log.warning("store %s: journal mode is %s, not WAL", self.path, mode)
            with self.atomic() as c:
                for statement in SCHEMA.split(";"):
                    if statement.strip():
                        c.execute(statement)
                c.execute(
                    f"CREATE VIRTUAL TABLE IF NOT EXISTS vec_embeddings USING vec0("
                    f"embedding float[{int(self.dimension)}] distance_metric=cosine)"
                )
                meta = dict(c.execute("SELECT key, value FROM meta").fetchall())
                if not meta:
                    c.executemany(
                        "INSERT INTO meta(key, value) VALUES (?, ?)",
                        [
                            ("schema_version", str(SCHEMA_VERSION)),
                            ("model_id", self.model_id),
                            ("dimension", str(self.dimension)),
                            ("model_sha256", self.model_sha256 or ""),
                            ("created_at", str(time.time())),
                        ],
                    )
                    meta = dict(c.execute("SELECT key, value FROM meta").fetchall())
                version = int(meta["schema_version"]) if str(meta.get("schema_version", "")).isdigit() else -1
                while version in MIGRATIONS and version < SCHEMA_VERSION:
                    MIGRATIONS[version](c)
                    version += 1
                    c.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
                    log.info("store %s migrated to schema version %s", self.path, version)
                    meta["schema_version"] = str(version)
                if meta.get("schema_version") == str(SCHEMA_VERSION):
                    for statement in POST_MIGRATION_SQL:
                        c.execute(statement)
        except SQLITE.DatabaseError as exc:
            if _cannot_write(exc):
                raise StoreFullError(f"cannot write the store {self.path}: {exc}") from None
            if _busy(exc):
                raise StoreBusyError(BUSY_MESSAGE.format(path=self.path)) from None
            raise CorruptStoreError(f"the store {self.path} is not a usable kbls store ({exc})") from None
        if meta.get("schema_version") != str(SCHEMA_VERSION):
            raise CorruptStoreError(
                f"the store {self.path} has schema version {meta.get('schema_version')}, "
                f"this kbls uses {SCHEMA_VERSION}"
            )
        if meta.get("model_id") != self.model_id or meta.get("dimension") != str(self.dimension):
            raise ModelMismatchError(
                f"the store {self.path} holds vectors of {meta.get('model_id')} "
                f"({meta.get('dimension')}-d); the configured model is {self.model_id} "
                f"({self.dimension}-d). Run `kbls index --rebuild` to re-embed with the new model."
            )

    # -- reads -------------------------------------------------------------------------------
    def files(self, paths: Iterable[str] | None = None) -> dict[str, FileRow]:
        """Rows of every file, or of just `paths` (a save must not read 10k rows to update one)."""
        if paths is None:
            rows = self.conn.execute("SELECT id, path, hash, size, mtime_ns, error FROM files").fetchall()
        else:
            wanted, rows = sorted(set(paths)), []
            for i in range(0, len(wanted), 500):
                batch = wanted[i : i + 500]
                marks = ",".join("?" * len(batch))
                rows += self.conn.execute(
                    f"SELECT id, path, hash, size, mtime_ns, error FROM files WHERE path IN ({marks})", batch
                ).fetchall()
        return {r[1]: FileRow(*r) for r in rows}

    def known_embeddings(self, hashes: Iterable[str]) -> set[str]:
        wanted = list(set(hashes))
        found: set[str] = set()
        for i in range(0, len(wanted), 500):
            batch = wanted[i : i + 500]
            marks = ",".join("?" * len(batch))
            found.update(r[0] for r in self.conn.execute(f"SELECT hash FROM embeddings WHERE hash IN ({marks})", batch))
        return found

    def counts(self) -> dict[str, int]:
        c = self.conn
        return {
            "files": c.execute("SELECT count(*) FROM files WHERE hash IS NOT NULL").fetchone()[0],
            "chunks": c.execute("SELECT count(*) FROM chunks").fetchone()[0],
            "vectors": c.execute("SELECT count(*) FROM embeddings").fetchone()[0],
        }

    def errors(self) -> list[tuple[str, str]]:
        return [tuple(r) for r in self.conn.execute("SELECT path, error FROM files WHERE error IS NOT NULL ORDER BY path")]

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                total += os.path.getsize(str(self.path) + suffix)
        return total

    def allowed_embeddings(self, filters: Filters) -> np.ndarray:
        params: dict[str, Any] = {}
        where = _filter_sql(filters, params)
        rows = self.conn.execute(
            f"SELECT DISTINCT c.embedding_id FROM chunks c JOIN files f ON f.id = c.file_id WHERE {where}",
            params,
        ).fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def chunks_for_embeddings(self, embedding_ids: list[int], filters: Filters) -> list[tuple]:
        """(embedding_id, chunk rowid) pairs, filtered."""
        if not embedding_ids:
            return []
        params: dict[str, Any] = {f"e{i}": e for i, e in enumerate(embedding_ids)}
        marks = ",".join(f":e{i}" for i in range(len(embedding_ids)))
        where = _filter_sql(filters, params)
        return self.conn.execute(
            f"SELECT c.embedding_id, c.id FROM chunks c JOIN files f ON f.id = c.file_id "
            f"WHERE c.embedding_id IN ({marks}) AND {where} ORDER BY c.id",
            params,
        ).fetchall()

    def first_chunks_matching(self, filters: Filters, limit: int) -> list[int]:
        """The first chunk of each file the filters keep, by path: a query of filters only."""
        params: dict[str, Any] = {"limit": limit}
        where = _filter_sql(filters, params)
        rows = self.conn.execute(
            f"SELECT (SELECT c.id FROM chunks c WHERE c.file_id = f.id ORDER BY c.ord LIMIT 1) AS first "
            f"FROM files f WHERE {where} AND first IS NOT NULL ORDER BY f.path LIMIT :limit",
            params,
        ).fetchall()
        return [r[0] for r in rows]

    def lexical(self, match: str, filters: Filters, limit: int) -> list[tuple[int, float]]:
        """(chunk rowid, bm25) best first; title and breadcrumb weigh more than the body."""
        params: dict[str, Any] = {"match": match, "limit": limit}
        if filters.empty:
            # Without filters the joins only cost: SQLite would join every matching chunk before
            # sorting (82 ms instead of 36 ms for 32k matches at 50k chunks).
            sql = dedent(
                """
                SELECT rowid, bm25(chunks_fts, 4.0, 2.0, 1.0) AS rank
                FROM chunks_fts WHERE chunks_fts MATCH :match
                ORDER BY rank LIMIT :limit
                """
            )
        else:
            where = _filter_sql(filters, params)
            sql = dedent(
                f"""
                SELECT chunks_fts.rowid, bm25(chunks_fts, 4.0, 2.0, 1.0) AS rank
                FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid JOIN files f ON f.id = c.file_id
                WHERE chunks_fts MATCH :match AND {where}
                ORDER BY rank LIMIT :limit
                """
            )
        try:
            return self.conn.execute(sql, params).fetchall()
        except SQLITE.OperationalError as exc:  # an FTS syntax error is a bad query, not a crash
            log.info("fts query %r failed: %s", match, exc)
            return []

    def term_doc_counts(self, terms: Iterable[str]) -> dict[str, int]:
        """How many chunks contain each term (FTS5 vocabulary), for planning a query."""
        wanted = sorted(set(terms))
        if not wanted:
            return {}
        conn = self.conn
        if not getattr(self._local, "vocab", False):
            # A temp table: per connection, nothing is written to the store file.
            conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.kb_vocab USING fts5vocab(main, chunks_fts, 'row')")
            self._local.vocab = True
        marks = ",".join("?" * len(wanted))
        return dict(conn.execute(f"SELECT term, doc FROM temp.kb_vocab WHERE term IN ({marks})", wanted).fetchall())

    def chunk_rows(self, chunk_rowids: list[int]) -> dict[int, dict[str, Any]]:
        if not chunk_rowids:
            return {}
        marks = ",".join("?" * len(chunk_rowids))
        rows = self.conn.execute(
            f"SELECT c.id, f.path, c.start_line, c.end_line, c.breadcrumb, c.body, f.title, c.embedding_id, c.file_id "
            f"FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
            chunk_rowids,
        ).fetchall()
        keys = ("id", "path", "start_line", "end_line", "breadcrumb", "body", "title", "embedding_id", "file_id")
        return {r[0]: dict(zip(keys, r)) for r in rows}

    def file_chunks(self, path: str) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT c.id, c.start_line, c.end_line, c.embedding_id, c.breadcrumb FROM chunks c "
            "JOIN files f ON f.id = c.file_id WHERE f.path = ? ORDER BY c.ord",
            (path,),
        ).fetchall()
        return [dict(zip(("id", "start_line", "end_line", "embedding_id", "breadcrumb"), r)) for r in rows]

    def file_info(self, path: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT id, path, title, aliases FROM files WHERE path = ?", (path,)).fetchone()
        if row is None:
            return None
        return {"id": row[0], "path": row[1], "title": row[2], "aliases": json.loads(row[3] or "[]")}

    def tags_of(self, file_id: int) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT tag FROM tags WHERE file_id = ?", (file_id,))}

    def files_sharing_tags(self, file_id: int) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for other, tag in self.conn.execute(
            "SELECT t2.file_id, t2.tag FROM tags t1 JOIN tags t2 ON t1.tag = t2.tag "
            "WHERE t1.file_id = ? AND t2.file_id != ?",
            (file_id, file_id),
        ):
            out.setdefault(other, []).append(tag)
        return out

    def outgoing_links(self, file_id: int) -> list[tuple[str, str]]:
        return [tuple(r) for r in self.conn.execute("SELECT kind, target FROM links WHERE file_id = ?", (file_id,))]

    def resolve_link_targets(self, paths: list[str], names: list[str]) -> set[int]:
        """File ids that `path` links or `[[name]]` wiki links point at (name: file stem, path
        without extension, title or alias, case-insensitive)."""
        ids: set[int] = set()
        c = self.conn
        for path in paths:
            ids.update(r[0] for r in c.execute("SELECT id FROM files WHERE path = ?", (path,)))
        for name in names:
            lowered = name.lower().strip()
            stem = lowered.rsplit("/", 1)[-1]
            ids.update(
                r[0]
                for r in c.execute(
                    "SELECT id FROM files WHERE stem = :stem AND (:name = stem OR lower(path) LIKE :name || '.%') "
                    "UNION SELECT id FROM files WHERE lower(title) = :name "
                    "UNION SELECT f.id FROM files f, json_each(f.aliases) a "
                    "WHERE f.aliases != '[]' AND lower(a.value) = :name",
                    {"stem": stem, "name": lowered},
                )
            )
        return ids

    def incoming_links(self, path: str, names: list[str]) -> set[int]:
        params = [path] + [n.lower() for n in names]
        marks = ",".join("?" * len(names)) or "NULL"
        return {
            r[0]
            for r in self.conn.execute(
                f"SELECT DISTINCT file_id FROM links WHERE (kind = 'path' AND target = ?) "
                f"OR (kind = 'wiki' AND lower(target) IN ({marks}))",
                params,
            )
        }

    def first_chunk_of_files(self, file_ids: Iterable[int]) -> dict[int, int]:
        out = {}
        for fid in file_ids:
            row = self.conn.execute("SELECT id FROM chunks WHERE file_id = ? ORDER BY ord LIMIT 1", (fid,)).fetchone()
            if row:
                out[fid] = row[0]
        return out

    # -- writes ------------------------------------------------------------------------------
    def write_note(self, note: NoteRecord, vectors: dict[str, np.ndarray]) -> tuple[int, int]:
        """Replace one file's rows in one transaction. `vectors` maps chunk hash -> vector for
        chunks whose text is not stored yet. Returns (chunks written, vectors added)."""
        added = 0
        with self.atomic() as c:
            row = c.execute("SELECT id FROM files WHERE path = ?", (note.path,)).fetchone()
            values = dict(
                path=note.path, hash=note.hash, size=note.size, mtime_ns=note.mtime_ns, title=note.title,
                stem=file_stem(note.path),
                kind=note.kind, note_type=note.note_type, aliases=json.dumps(note.aliases),
                error=note.warning, indexed_at=time.time(),
            )
            if row is None:
                file_id = c.execute(
                    "INSERT INTO files(path, hash, size, mtime_ns, title, stem, kind, note_type, aliases, error, indexed_at) "
                    "VALUES (:path, :hash, :size, :mtime_ns, :title, :stem, :kind, :note_type, :aliases, :error, :indexed_at)",
                    values,
                ).lastrowid
            else:
                file_id = row[0]
                c.execute(
                    "UPDATE files SET hash=:hash, size=:size, mtime_ns=:mtime_ns, title=:title, stem=:stem, kind=:kind, "
                    "note_type=:note_type, aliases=:aliases, error=:error, indexed_at=:indexed_at WHERE id=:id",
                    {**values, "id": file_id},
                )
            self._delete_chunks(c, file_id)
            c.execute("DELETE FROM tags WHERE file_id = ?", (file_id,))
            c.execute("DELETE FROM links WHERE file_id = ?", (file_id,))
            c.executemany("INSERT OR IGNORE INTO tags(file_id, tag) VALUES (?, ?)", [(file_id, t) for t in note.tags])
            c.executemany(
                "INSERT INTO links(file_id, kind, target) VALUES (?, ?, ?)", [(file_id, k, t) for k, t in note.links]
            )
            for chunk in note.chunks:
                found = c.execute("SELECT id FROM embeddings WHERE hash = ?", (chunk.hash,)).fetchone()
                if found is None:
                    vector = vectors[chunk.hash]
                    embedding_id = c.execute("INSERT INTO embeddings(hash) VALUES (?)", (chunk.hash,)).lastrowid
                    c.execute(
                        "INSERT INTO vec_embeddings(rowid, embedding) VALUES (?, ?)",
                        (embedding_id, np.asarray(vector, dtype=np.float32).tobytes()),
                    )
                    added += 1
                else:
                    embedding_id = found[0]
                chunk_rowid = c.execute(
                    "INSERT INTO chunks(chunk_id, file_id, ord, hash, embedding_id, start_line, end_line, breadcrumb, body) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (chunk.chunk_id, file_id, chunk.ord, chunk.hash, embedding_id, chunk.start_line,
                     chunk.end_line, chunk.breadcrumb, chunk.body),
                ).lastrowid
                c.execute(
                    "INSERT INTO chunks_fts(rowid, title, breadcrumb, body) VALUES (?, ?, ?, ?)",
                    (chunk_rowid, note.title, chunk.breadcrumb, chunk.body),
                )
        return len(note.chunks), added

    @staticmethod
    def _delete_chunks(c: Any, file_id: int) -> None:
        c.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)", (file_id,))
        c.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))

    def record_problem(self, path: str, reason: str, size: int, mtime_ns: int) -> None:
        """Note why a file was skipped; its old chunks (if any) stay searchable."""
        with self.atomic() as c:
            updated = c.execute(
                "UPDATE files SET error = ?, size = ?, mtime_ns = ? WHERE path = ?", (reason, size, mtime_ns, path)
            ).rowcount
            if not updated:
                c.execute(
                    "INSERT INTO files(path, hash, size, mtime_ns, error, indexed_at) VALUES (?, NULL, ?, ?, ?, ?)",
                    (path, size, mtime_ns, reason, time.time()),
                )

    def touch(self, path: str, size: int, mtime_ns: int) -> None:
        with self.atomic() as c:
            c.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path))

    def delete_file(self, path: str) -> bool:
        with self.atomic() as c:
            row = c.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
            if row is None:
                return False
            self._delete_chunks(c, row[0])
            c.execute("DELETE FROM files WHERE id = ?", (row[0],))
            return True

    def collect_garbage(self) -> int:
        """Drop vectors no chunk uses any more (kept until a full scan so renames re-embed nothing)."""
        with self.atomic() as c:
            ids = [r[0] for r in c.execute(
                "SELECT id FROM embeddings WHERE id NOT IN (SELECT embedding_id FROM chunks)"
            )]
            for i in range(0, len(ids), 500):
                batch = ids[i : i + 500]
                marks = ",".join("?" * len(batch))
                c.execute(f"DELETE FROM vec_embeddings WHERE rowid IN ({marks})", batch)
                c.execute(f"DELETE FROM embeddings WHERE id IN ({marks})", batch)
        return len(ids)

    def sqlite_info(self) -> dict[str, str]:
        vec = self.conn.execute("SELECT vec_version()").fetchone()[0]
        return {"module": SQLITE_MODULE_NAME, "version": SQLITE.sqlite_version, "vec": vec}
