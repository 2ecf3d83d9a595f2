"""A real PostgreSQL 16 + pgvector for tests and benchmarks (the `pgserver` wheel), fresh
databases in it, and a copy of a SQLite store's rows into a team store.

`pgserver.get_server(folder)` initialises a private cluster in `folder` and starts it on a unix
socket there (also as root); the server stops when the process that started it exits.
Copying a SQLite store writes each note through `PostgresStore.write_note` with the vectors
read back from sqlite-vec: the same rows in both backends without embedding again (the
product's ingest, `kbls index --store postgresql://…`, always embeds itself).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from kbls.storage.connection import Connection, connect
from kbls.storage.postgres.location import PgLocation
from kbls.storage.postgres.store import PostgresStore
from kbls.storage.records import ChunkRecord, LinkSpan, NoteRecord, NoteSpans, Span, TagSpan
from kbls.storage.roles import NoteWriter


class PgUnavailable(Exception):
    """pgserver is not installed or its server cannot start here (the reason is the message)."""


def start_server(folder: Path) -> Any:
    """The pgserver PostgresServer running in `folder` (its `get_uri()` names the admin database)."""
    try:
        import pgserver
    except ImportError as exc:
        raise PgUnavailable(f"pgserver is not installed ({exc}); `make venv` installs it with the test extras") from exc
    try:
        return pgserver.get_server(folder, cleanup_mode="stop")
    except Exception as exc:  # its own error types vary by version: any failure to start is a skip
        raise PgUnavailable(f"pgserver could not start PostgreSQL in {folder}: {exc}") from exc


def new_database(server: Any, name: str | None = None) -> str:
    """A new, empty database on `server`; its URL (no password: the socket trusts this user)."""
    import psycopg

    name = name or f"kb_{uuid.uuid4().hex[:12]}"
    admin = server.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return str(admin).replace("postgres:@", "postgres@").replace("/postgres?", f"/{name}?", 1)


def copy_sqlite_store(sqlite_file: Path, store: NoteWriter) -> int:
    """Write every note of a SQLite store file into `store` (a team store, or another SQLite
    store to compare write throughput), vectors included; returns the notes copied."""
    src = connect(sqlite_file, read_only=True)
    copied = 0
    columns = {row[1] for row in src.execute("PRAGMA table_info(files)")}
    spans = src.execute("SELECT count(*) FROM sqlite_master WHERE name = 'link_spans'").fetchone()[0] > 0
    note_type = "note_type" if "note_type" in columns else "NULL"
    files = src.execute(
        f"SELECT id, path, hash, size, mtime_ns, title, kind, {note_type}, aliases, error FROM files WHERE hash IS NOT NULL"
    ).fetchall()
    for fid, path, digest, size, mtime, title, kind, ntype, aliases, error in files:
        chunks = src.execute(
            "SELECT c.chunk_id, c.ord, c.hash, c.start_line, c.end_line, c.breadcrumb, c.body, v.embedding "
            "FROM chunks c JOIN vec_embeddings v ON v.rowid = c.embedding_id WHERE c.file_id = ? ORDER BY c.ord",
            (fid,),
        ).fetchall()
        vectors = {h: np.frombuffer(blob, dtype=np.float32) for _, _, h, _, _, _, _, blob in chunks}
        note = NoteRecord(
            path=path, hash=digest, size=size, mtime_ns=mtime, title=title, kind=kind, note_type=ntype,
            aliases=json.loads(aliases or "[]"),
            tags=[t for (t,) in src.execute("SELECT tag FROM tags WHERE file_id = ?", (fid,))],
            links=[(k, t) for k, t in src.execute("SELECT kind, target FROM links WHERE file_id = ?", (fid,))],
            chunks=[ChunkRecord(cid, o, h, s, e, b, body) for cid, o, h, s, e, b, body, _ in chunks],
            warning=error, spans=_spans(src, fid) if spans else NoteSpans(),
        )
        store.write_note(note, vectors)
        copied += 1
    src.close()
    return copied


def _spans(src: Connection, fid: int) -> NoteSpans:
    links = tuple(
        LinkSpan(k, t, key, h, label, Span(*where))
        for k, t, key, h, label, *where in src.execute(
            "SELECT kind, target, target_key, heading, label, line, start, end, start16, end16, start8, end8 "
            "FROM link_spans WHERE file_id = ?", (fid,),
        )
    )
    tags = tuple(
        TagSpan(tag, written, bool(fm), Span(*where))
        for tag, written, fm, *where in src.execute(
            "SELECT tag, written, front_matter, line, start, end, start16, end16, start8, end8 FROM tag_spans WHERE file_id = ?",
            (fid,),
        )
    )
    return NoteSpans(links, tags)


def team_store(url: str, root: Path, *, model_id: str, dimension: int, sha256: str | None) -> PostgresStore:
    return PostgresStore(
        PgLocation.parse(url, root, "test"), model_id=model_id, dimension=dimension, model_sha256=sha256, write=True
    )
