"""The team store's tables, its `kbls_meta` table and the migrations between schema versions.

One database, many roots: `roots` names them, and files, chunks, terms, links and tags carry
their root. Vectors are content-addressed by chunk-text hash and shared by every root
(`embeddings`), so a branch or a copied folder embeds nothing twice; one model per database
(`kbls_meta`), checked on every open: a worker with another model refuses to write and a reader
with another model refuses to search (its query vectors would mean nothing here).

Text columns that are compared by range or sorted are `COLLATE "C"`: byte order, as SQLite
compares, so prefix ranges (`tag/`…`tag0`) and path order match the SQLite backend.
Each migration runs in the transaction that records its version; a schema newer than this kbls
is refused before anything is written.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg

from kbls import __version__
from kbls.errors import ModelMismatchError, StoreError, StoreTooNewError
from kbls.storage.postgres.connection import PgPool, Row

SCHEMA_VERSION = 1
#: the tables of version 1; `{dim}` is the model's dimension.
_V1 = """
CREATE TABLE IF NOT EXISTS roots (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text COLLATE "C" NOT NULL UNIQUE,
    revision bigint NOT NULL DEFAULT 0,
    chunking text,
    created_at double precision NOT NULL
);
CREATE TABLE IF NOT EXISTS files (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    root_id integer NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
    path text COLLATE "C" NOT NULL,
    hash text,
    size bigint NOT NULL DEFAULT 0,
    mtime_ns bigint NOT NULL DEFAULT 0,
    title text NOT NULL DEFAULT '',
    kind text NOT NULL DEFAULT 'md',
    stem text NOT NULL DEFAULT '',
    note_type text,
    aliases text NOT NULL DEFAULT '[]',
    error text,
    indexed_at double precision NOT NULL DEFAULT 0,
    UNIQUE (root_id, path)
);
CREATE TABLE IF NOT EXISTS embeddings (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    hash text NOT NULL UNIQUE,
    embedding vector({dim}) NOT NULL
);
CREATE INDEX IF NOT EXISTS embeddings_hnsw ON embeddings USING hnsw (embedding vector_cosine_ops);
CREATE TABLE IF NOT EXISTS chunks (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chunk_id text NOT NULL,
    root_id integer NOT NULL,
    file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ord integer NOT NULL,
    hash text NOT NULL,
    embedding_id bigint NOT NULL REFERENCES embeddings(id),
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    breadcrumb text NOT NULL,
    body text NOT NULL,
    ntok integer NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE INDEX IF NOT EXISTS chunks_embedding ON chunks(embedding_id);
CREATE INDEX IF NOT EXISTS chunks_root ON chunks(root_id);
CREATE TABLE IF NOT EXISTS chunk_terms (
    chunk_id bigint NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    root_id integer NOT NULL,
    term text COLLATE "C" NOT NULL,
    tf real NOT NULL,
    ntok integer NOT NULL,  -- the chunk's token count again: BM25 reads no chunk row
    PRIMARY KEY (chunk_id, term)
);
CREATE INDEX IF NOT EXISTS chunk_terms_term ON chunk_terms(root_id, term);
CREATE TABLE IF NOT EXISTS tags (
    file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    tag text COLLATE "C" NOT NULL,
    PRIMARY KEY (file_id, tag)
);
CREATE INDEX IF NOT EXISTS tags_tag ON tags(tag);
CREATE TABLE IF NOT EXISTS links (
    file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    kind text NOT NULL,
    target text COLLATE "C" NOT NULL
);
CREATE INDEX IF NOT EXISTS links_file ON links(file_id);
CREATE INDEX IF NOT EXISTS links_target ON links(target);
CREATE TABLE IF NOT EXISTS link_spans (
    file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    kind text NOT NULL,
    target text NOT NULL,
    target_key text COLLATE "C",
    heading text,
    label text,
    line integer NOT NULL,
    start_cp integer NOT NULL, end_cp integer NOT NULL,
    start16 integer NOT NULL, end16 integer NOT NULL,
    start8 integer NOT NULL, end8 integer NOT NULL
);
CREATE INDEX IF NOT EXISTS link_spans_file ON link_spans(file_id);
CREATE INDEX IF NOT EXISTS link_spans_key ON link_spans(target_key);
CREATE TABLE IF NOT EXISTS tag_spans (
    file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    tag text COLLATE "C" NOT NULL,
    written text NOT NULL,
    front_matter boolean NOT NULL,
    line integer NOT NULL,
    start_cp integer NOT NULL, end_cp integer NOT NULL,
    start16 integer NOT NULL, end16 integer NOT NULL,
    start8 integer NOT NULL, end8 integer NOT NULL
);
CREATE INDEX IF NOT EXISTS tag_spans_file ON tag_spans(file_id);
CREATE INDEX IF NOT EXISTS tag_spans_tag ON tag_spans(tag);
"""

Migration = Callable[["psycopg.Connection[Row]", int], None]


def _create_v1(c: psycopg.Connection[Row], dimension: int) -> None:
    c.execute(_V1.replace("{dim}", str(int(dimension))))  # several statements: no parameters


#: version -> the step that creates it from the version before (0: an empty database).
MIGRATIONS: dict[int, Migration] = {1: _create_v1}
assert max(MIGRATIONS) == SCHEMA_VERSION


def read_meta(pool: PgPool) -> dict[str, str]:
    exists = pool.one("SELECT to_regclass('kbls_meta') IS NOT NULL")
    if not (exists and exists[0]):
        return {}
    return {str(k): str(v) for k, v in pool.fetch("SELECT key, value FROM kbls_meta")}


def ensure_schema(
    pool: PgPool, *, model_id: str, dimension: int, model_sha256: str | None, root_name: str, write: bool
) -> tuple[dict[str, str], int]:
    """Check (and, for a writer, create or migrate) the schema; returns the meta and the root's id.

    :raises StoreTooNewError, ModelMismatchError, StoreError: nothing was written.
    """
    meta = read_meta(pool)
    if not meta and not write:
        raise StoreError(
            f"the store {pool.display} holds no kbls index yet: run `kbls index --store URL --root DIR` "
            "on the ingest worker first"
        )
    _check(pool, meta, model_id, dimension, model_sha256)
    if write:
        with pool.atomic() as c:
            # One migrating worker at a time (two first runs of an empty database).
            c.execute("SELECT pg_advisory_xact_lock(27490, 0)")
            c.execute("CREATE EXTENSION IF NOT EXISTS vector")
            c.execute("CREATE TABLE IF NOT EXISTS kbls_meta (key text PRIMARY KEY, value text NOT NULL)")
            meta = {str(k): str(v) for k, v in c.execute("SELECT key, value FROM kbls_meta").fetchall()}
            _check(pool, meta, model_id, dimension, model_sha256)
            version = int(meta.get("schema_version", "0"))
            for step in range(version + 1, SCHEMA_VERSION + 1):
                MIGRATIONS[step](c, dimension)
            values = {"schema_version": str(SCHEMA_VERSION), "kbls_version": __version__}
            if not meta:
                values.update(model_id=model_id, dimension=str(dimension), created_at=str(time.time()))
                if model_sha256:
                    values["model_sha256"] = model_sha256
            for key, value in values.items():
                c.execute(
                    "INSERT INTO kbls_meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    (key, value),
                )
            c.execute(
                "INSERT INTO roots(name, created_at) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                (root_name, time.time()),
            )
        meta = read_meta(pool)
    row = pool.one("SELECT id FROM roots WHERE name = %s", (root_name,))
    if row is None:
        known = ", ".join(sorted(str(r[0]) for r in pool.fetch("SELECT name FROM roots"))) or "none"
        raise StoreError(
            f"the store {pool.display} holds no root named {root_name!r} (roots: {known}); index it with "
            "`kbls index` on the ingest worker, or name the root with `?kbls_root=NAME` in the URL"
        )
    return meta, int(row[0])


def _check(pool: PgPool, meta: dict[str, str], model_id: str, dimension: int, model_sha256: str | None) -> None:
    if not meta:
        return
    version = int(meta.get("schema_version", "0"))
    if version > SCHEMA_VERSION:
        raise StoreTooNewError(
            f"the store {pool.display} has schema {version}, written by kbls {meta.get('kbls_version', '?')}; "
            f"this kbls ({__version__}) reads schema {SCHEMA_VERSION} at most: upgrade kbls"
        )
    stored_model, stored_dim = meta.get("model_id"), meta.get("dimension")
    if stored_model is not None and (stored_model != model_id or stored_dim != str(dimension)):
        raise ModelMismatchError(
            f"the store {pool.display} holds vectors of the model {stored_model} ({stored_dim}-d); this kbls "
            f"uses {model_id} ({dimension}-d): refusing to mix them. Set `model:` to {stored_model}, or "
            "index into another database"
        )
    stored_sha = meta.get("model_sha256")
    if stored_sha and model_sha256 and stored_sha != model_sha256:
        raise ModelMismatchError(
            f"the store {pool.display} holds vectors of {stored_model} with the weights sha256 {stored_sha[:12]}…; "
            f"this kbls loads {model_sha256[:12]}… under the same name: refusing to mix them"
        )
