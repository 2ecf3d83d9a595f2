"""The store's tables, its `meta` table and the migrations between schema versions.

`ensure_schema` runs when a store opens for writing: it creates what is missing, migrates an
older schema in place (each step in the transaction that records it) and refuses a store it
cannot serve: another schema, another model, another workspace root. A store of a later schema
(a newer kbls wrote it) is refused before anything is written, and never taken for a damaged one:
setting it aside would strand the newer index and re-embed every note at each switch between
two kbls versions. `read_schema` does the checks without writing. The FTS5 table is defined in
`kbls.storage.fts`.

`meta` keys: schema_version, model_id, dimension, model_sha256, created_at; `root` (the
workspace root whose index this is: two roots that name one `store:` must not mix their notes)
and `generation` (a random token of this store file, so a store deleted and created again is
told apart from the one a process opened even when the file system reuses the inode);
`chunking` (the fingerprint of the parser/chunker version and chunk settings the notes were last
chunked under, written by a complete full scan: a store without it, or with another, has every
note re-chunked by the next full scan; see `kbls.indexing.chunk.CHUNKING_VERSION`);
`kbls_version` (the kbls that last opened it for writing, named when an older kbls refuses it).

Every chunk has one text row (`chunks` + its `chunks_fts` row) and one `embeddings` row, which
holds either a vector (`vec_embeddings`, same rowid) or a pending mark (`pending_embeddings`,
with the text the model will read): a first index writes every note without vectors and embeds
them afterwards (`kbls.indexing.pipeline`).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from textwrap import dedent

from kbls import __version__
from kbls.errors import CorruptStoreError, ModelMismatchError, StoreError, StoreRootMismatchError, StoreTooNewError
from kbls.notepath import file_stem
from kbls.storage.connection import Connection, ConnectionPool
from kbls.storage.fts import FTS_TABLE_SQL, rebuild_with_terms

log = logging.getLogger(__name__)

SCHEMA_VERSION = 5
#: the `meta` key of the chunking fingerprint (`StoreReads.chunking`, `StoreWrites.record_chunking`).
CHUNKING_KEY = "chunking"

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
    """
)
#: chunk texts written before their vector (the lexical first pass); created by `SCHEMA` in a new
#: store and by the migration to v5 in an older one.
PENDING_SQL = dedent(
    """
    CREATE TABLE IF NOT EXISTS pending_embeddings (
        embedding_id INTEGER PRIMARY KEY REFERENCES embeddings(id) ON DELETE CASCADE,
        text TEXT NOT NULL
    );
    """
)
#: where a link or tag is written (`kbls.storage.records.Span`): its line, and its columns in code
#: points, UTF-16 and UTF-8 units.
_SPAN_COLUMNS = """\
        line INTEGER NOT NULL,
        start INTEGER NOT NULL,
        end INTEGER NOT NULL,
        start16 INTEGER NOT NULL,
        end16 INTEGER NOT NULL,
        start8 INTEGER NOT NULL,
        end8 INTEGER NOT NULL"""
#: every link and tag a note writes, with its position (`kbls.indexing.spans`); created by
#: `SCHEMA` in a new store and by the migration to v3 in an older one.
SPANS_SQL = dedent(
    f"""
    CREATE TABLE IF NOT EXISTS link_spans (
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        target TEXT NOT NULL,
        target_key TEXT,  -- NULL: a path that leaves the root
        heading TEXT,
        label TEXT,
{_SPAN_COLUMNS}
    );
    CREATE INDEX IF NOT EXISTS link_spans_file ON link_spans(file_id);
    CREATE INDEX IF NOT EXISTS link_spans_key ON link_spans(target_key);
    CREATE TABLE IF NOT EXISTS tag_spans (
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        written TEXT NOT NULL,
        front_matter INTEGER NOT NULL,
{_SPAN_COLUMNS}
    );
    CREATE INDEX IF NOT EXISTS tag_spans_file ON tag_spans(file_id);
    CREATE INDEX IF NOT EXISTS tag_spans_tag ON tag_spans(tag);
    """
)


def vector_table_sql(dimension: int) -> str:
    """sqlite-vec's table of vectors; its rowid is the `embeddings` id."""
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS vec_embeddings USING vec0("
        f"embedding float[{int(dimension)}] distance_metric=cosine)"
    )


def _migrate_1_to_2(c: Connection) -> None:
    """v2 added `files.stem`, so `[[wiki]]` links resolve through an index."""
    columns = {row[1] for row in c.execute("PRAGMA table_info(files)")}
    if "stem" not in columns:  # development builds of v1 already had it
        c.execute("ALTER TABLE files ADD COLUMN stem TEXT NOT NULL DEFAULT ''")
    rows = c.execute("SELECT id, path FROM files").fetchall()
    c.executemany("UPDATE files SET stem = ? WHERE id = ?", [(file_stem(path), fid) for fid, path in rows])


def _migrate_2_to_3(c: Connection) -> None:
    """v3 keeps where each link and tag is written (`link_spans`, `tag_spans`). The notes
    already stored have none: forgetting the chunking fingerprint makes the next full scan
    read every note again (their chunks and vectors stay: nothing is embedded again)."""
    _run_script(c, SPANS_SQL)
    c.execute("DELETE FROM meta WHERE key = ?", (CHUNKING_KEY,))


def _migrate_3_to_4(c: Connection) -> None:
    """v4 indexes the tokens unicode61 does not make (CamelCase parts, CJK bigrams) in a
    `terms` column of the FTS table, rebuilt from the texts it holds: nothing is embedded."""
    rebuild_with_terms(c)


def _migrate_4_to_5(c: Connection) -> None:
    """v5 lets a chunk wait for its vector (`pending_embeddings`); an older store has none waiting."""
    _run_script(c, PENDING_SQL)


def _run_script(c: Connection, script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            c.execute(statement)


#: from-version -> step to the next version; each runs in the transaction that records it.
MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    1: _migrate_1_to_2, 2: _migrate_2_to_3, 3: _migrate_3_to_4, 4: _migrate_4_to_5,
}
#: indexes on columns that migrations add: created once the migrations ran.
POST_MIGRATION_SQL = ("CREATE INDEX IF NOT EXISTS files_stem ON files(stem)",)


def read_meta(conn: Connection) -> dict[str, str]:
    """The `meta` table as a mapping (every value is text)."""
    return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta").fetchall()}


def ensure_schema(
    pool: ConnectionPool,
    *,
    model_id: str,
    dimension: int,
    model_sha256: str | None,
    check: bool,
    root: Path | None = None,
) -> dict[str, str]:
    """Create or migrate the schema of `pool`'s store and check that it serves this model and root.

    :param check: run `PRAGMA quick_check` first (a daemon opening a store it did not create).
    :param root: the workspace root opening the store (None: a tool that does not index).
    :returns: the `meta` table after creation and migration.
    :raises CorruptStoreError: damaged, or of an older schema this version cannot migrate.
    :raises StoreTooNewError: written by a newer kbls; nothing was written to it.
    :raises ModelMismatchError: the store holds vectors of another model or dimension.
    :raises StoreRootMismatchError: the store holds the index of another root that still exists.
    """
    path: Path = pool.path
    conn = pool.conn
    if check and path.exists() and path.stat().st_size > 0:
        result = conn.execute("PRAGMA quick_check").fetchone()[0]
        if result != "ok":
            raise CorruptStoreError(f"the store {path} is damaged ({result})")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal" and pool.uri is None:  # an in-memory store has no WAL
        log.warning("store %s: journal mode is %s, not WAL", path, mode)
    with pool.atomic() as c:
        if c.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone():
            refuse_newer(path, read_meta(c))  # before this version's tables touch a later schema
        _run_script(c, SCHEMA)
        c.execute(FTS_TABLE_SQL)
        c.execute(vector_table_sql(dimension))
        meta = read_meta(c)
        if not meta:
            c.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?)",
                [
                    ("schema_version", str(SCHEMA_VERSION)),
                    ("model_id", model_id),
                    ("dimension", str(dimension)),
                    ("model_sha256", model_sha256 or ""),
                    ("created_at", str(time.time())),
                    ("generation", uuid.uuid4().hex),
                ],
            )
            meta = read_meta(c)
        version = int(meta["schema_version"]) if meta.get("schema_version", "").isdigit() else -1
        while version in MIGRATIONS and version < SCHEMA_VERSION:
            MIGRATIONS[version](c)
            version += 1
            c.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
            log.info("store %s migrated to schema version %s", path, version)
            meta["schema_version"] = str(version)
        if meta.get("schema_version") == str(SCHEMA_VERSION):
            for statement in POST_MIGRATION_SQL:
                c.execute(statement)
            _run_script(c, SPANS_SQL)
            _run_script(c, PENDING_SQL)
        check_meta(path, meta, model_id=model_id, dimension=dimension)
        if root is not None and check_root(path.parent, meta, root):
            _set_meta(c, meta, "root", str(root))
        if "generation" not in meta:  # stores of earlier versions: given one on first open
            _set_meta(c, meta, "generation", uuid.uuid4().hex)
        if meta.get("kbls_version") != __version__:
            _set_meta(c, meta, "kbls_version", __version__)
    return meta


def read_schema(pool: ConnectionPool, *, model_id: str, dimension: int, root: Path | None = None) -> dict[str, str]:
    """`ensure_schema`'s checks on a store opened read-only; nothing is written.

    :raises StoreError: the store must be upgraded by `kbls index` first.
    """
    meta = read_meta(pool.conn)
    version = meta.get("schema_version", "")
    if version.isdigit() and int(version) in MIGRATIONS:
        raise StoreError(f"the store {pool.path} was written by an earlier kbls; run `kbls index` once to upgrade it")
    check_meta(pool.path, meta, model_id=model_id, dimension=dimension)
    if root is not None:
        check_root(pool.path.parent, meta, root)
    return meta


def check_root(directory: Path, meta: dict[str, str], root: Path) -> bool:
    """Whether `root` may use this store, and must be recorded as its root (True) or is (False).

    A store that records no root (new, or of an earlier kbls) takes this one; so does a store
    whose root no longer exists (the folder was moved or renamed).

    :raises StoreRootMismatchError: another root that still exists indexed into this store.
    """
    recorded = meta.get("root")
    if recorded == str(root):
        return False
    if recorded is None or not Path(recorded).is_dir():
        return True
    raise StoreRootMismatchError(
        f"the store {directory} holds the index of {recorded}, not of {root}: two workspace roots "
        f"cannot share one store, their notes would mix. Give each root a store of its own (the "
        f"`store:` setting of its .kbls.yaml, or --store), or remove `store:` to use a per-root "
        f"folder in the user cache. If {root} is a copy of {recorded}, run `kbls index --rebuild` in it."
    )


def _set_meta(c: Connection, meta: dict[str, str], key: str, value: str) -> None:
    c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
    meta[key] = value


def refuse_newer(path: Path, meta: dict[str, str]) -> None:
    """Refuse a store of a later schema: what to do is the user's call (use the newer kbls, or
    start over), as for a store of another model.

    :raises StoreTooNewError: naming both versions and both ways out.
    """
    version = meta.get("schema_version", "")
    if not version.isdigit() or int(version) <= SCHEMA_VERSION:
        return
    writer = meta.get("kbls_version")
    by = f"kbls {writer}" if writer else "a newer kbls"
    raise StoreTooNewError(
        f"the store {path} was written by {by} (store schema version {version}); this kbls "
        f"{__version__} reads schema version {SCHEMA_VERSION} and leaves the store as it is. "
        f"Use or upgrade to the newer kbls, or run `kbls index --rebuild` to delete this store "
        f"and index the notes again with this version."
    )


def check_meta(path: Path, meta: dict[str, str], *, model_id: str, dimension: int) -> None:
    """Refuse a store of another schema version or another model."""
    refuse_newer(path, meta)
    if meta.get("schema_version") != str(SCHEMA_VERSION):
        raise CorruptStoreError(
            f"the store {path} has schema version {meta.get('schema_version')}, this kbls uses {SCHEMA_VERSION}"
        )
    if meta.get("model_id") != model_id or meta.get("dimension") != str(dimension):
        raise ModelMismatchError(
            f"the store {path} holds vectors of {meta.get('model_id')} "
            f"({meta.get('dimension')}-d); the configured model is {model_id} "
            f"({dimension}-d). Run `kbls index --rebuild` to re-embed with the new model."
        )
