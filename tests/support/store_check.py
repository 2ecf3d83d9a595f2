"""The invariants every store must hold (issue 6), read straight from SQLite, not through `Store`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_vec

from kbls.indexing.chunk import text_hash
from kbls.storage.connection import SQLITE
from kbls.storage.store import STORE_FILE


def connect(store_dir: Path) -> Any:
    """A raw connection to the store in `store_dir`, sqlite-vec loaded, waiting out writers."""
    conn = SQLITE.connect(str(store_dir / STORE_FILE), timeout=30, isolation_level=None)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn
@dataclass
class StoreState:
    #: path -> [(chunk_id, body)] in chunk order
    chunks: dict[str, list[tuple[str, str]]]
    #: chunk-text hashes with a stored vector
    embedded: set[str]
    orphans: int
    #: chunk-text hashes written by the lexical pass and still waiting for their vector
    pending: set[str]


def check_store(store_dir: Path, root: Path | None = None, *, full_scan_done: bool = False) -> StoreState:
    """Assert every invariant of issue 6 on one store and return what it holds.

    - `PRAGMA integrity_check` is ok;
    - each chunk's embedding exists in `embeddings`, and each `embeddings` row has either a vector
      (`vec_embeddings`) or a pending mark (`pending_embeddings`, whose text hashes to it), never
      both, never neither; each chunk has exactly one FTS row with its text and each FTS row a
      chunk;
    - unreferenced vectors only before a full scan completed (`full_scan_done`);
    - with `root`: each file row's hash is the hash of the file on disk.
    """
    conn = connect(store_dir)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        chunk_ids = [r[0] for r in conn.execute("SELECT id FROM chunks")]
        fts = dict(conn.execute("SELECT rowid, body FROM chunks_fts").fetchall())
        bodies = dict(conn.execute("SELECT id, body FROM chunks").fetchall())
        assert len(fts) == conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
        assert set(fts) == set(chunk_ids), "chunks without an FTS row, or FTS rows without a chunk"
        assert all(fts[i] == bodies[i] for i in chunk_ids), "an FTS row holds another text than its chunk"
        missing = conn.execute(
            "SELECT count(*) FROM chunks WHERE embedding_id NOT IN (SELECT id FROM embeddings)"
        ).fetchone()[0]
        assert missing == 0, f"{missing} chunks point at no embedding"
        emb_ids = {r[0] for r in conn.execute("SELECT id FROM embeddings")}
        vec_ids = [r[0] for r in conn.execute("SELECT rowid FROM vec_embeddings")]
        assert len(vec_ids) == len(set(vec_ids))
        waiting = dict(conn.execute("SELECT embedding_id, text FROM pending_embeddings").fetchall())
        assert not set(vec_ids) & set(waiting), "an embedding with both a vector and a pending mark"
        assert set(vec_ids) | set(waiting) == emb_ids, "an embedding with neither a vector nor a pending mark, or a stray row"
        hashes = dict(conn.execute("SELECT id, hash FROM embeddings").fetchall())
        for embedding_id, text in waiting.items():
            assert text_hash(text) == hashes[embedding_id], "a pending mark holds another text than its chunk's"
        orphans = conn.execute(
            "SELECT count(*) FROM embeddings WHERE id NOT IN (SELECT embedding_id FROM chunks)"
        ).fetchone()[0]
        if full_scan_done:
            assert orphans == 0, f"{orphans} unreferenced vectors after a completed full scan"
        bad = conn.execute(
            "SELECT count(*) FROM chunks WHERE hash != (SELECT hash FROM embeddings e WHERE e.id = embedding_id)"
        ).fetchone()[0]
        assert bad == 0, "a chunk points at the vector of another text"
        chunks: dict[str, list[tuple[str, str]]] = {}
        for path, chunk_id, body in conn.execute(
            "SELECT f.path, c.chunk_id, c.body FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY f.path, c.ord"
        ):
            chunks.setdefault(path, []).append((chunk_id, body))
        if root is not None:
            for path, digest in conn.execute("SELECT path, hash FROM files WHERE hash IS NOT NULL"):
                on_disk = root / path
                if on_disk.exists():
                    data = on_disk.read_bytes()
                    assert digest == hashlib.blake2b(data, digest_size=16).hexdigest(), f"{path}: stale file hash"
        pending = {hashes[i] for i in waiting}
        embedded = set(hashes.values()) - pending
        return StoreState(chunks=chunks, embedded=embedded, orphans=orphans, pending=pending)
    finally:
        conn.close()
