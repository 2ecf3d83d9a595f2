"""The chunk texts waiting for their vectors, in the order the user needs them.

The lexical first pass writes every note with its chunk texts marked pending
(`pending_embeddings`, see `kbls.storage.writes`); the embedding pass takes them from here a
batch at a time: the texts of the notes named first (those open in an editor), then by their
note's modification time, newest first, so what the user is working on gets its vectors first.
A pending text no chunk uses any more (its note changed meanwhile) is never handed out; the
next full scan's garbage collection drops it.

`StorePending` is one part of `kbls.storage.store.Store`.
"""

from __future__ import annotations

from collections.abc import Sequence

from kbls.storage.connection import ConnectionPool

#: SQLite binds at most 999 variables in old builds: the paths named first go in batches.
BATCH = 500

_ORDERED = (
    "SELECT e.hash, p.text FROM pending_embeddings p JOIN embeddings e ON e.id = p.embedding_id "
    "JOIN chunks c ON c.embedding_id = p.embedding_id JOIN files f ON f.id = c.file_id {where} "
    "GROUP BY p.embedding_id ORDER BY max(f.mtime_ns) DESC, p.embedding_id LIMIT ?"
)


class StorePending:
    """Reads of the pending chunk texts over `self.db`."""

    db: ConnectionPool

    def pending_texts(self, limit: int, first: Sequence[str] = ()) -> dict[str, str]:
        """Up to `limit` pending chunk texts (hash -> the text the model reads): those of the
        notes at the root-relative paths `first`, then the newest notes' first."""
        out: dict[str, str] = {}
        conn = self.db.conn
        wanted = sorted(set(first))
        for i in range(0, len(wanted), BATCH):
            if len(out) >= limit:
                break
            batch = wanted[i : i + BATCH]
            marks = ",".join("?" * len(batch))
            sql = _ORDERED.format(where=f"WHERE f.path IN ({marks})")
            out.update(conn.execute(sql, (*batch, limit - len(out))).fetchall())
        if len(out) < limit:
            rows = conn.execute(_ORDERED.format(where=""), (limit,)).fetchall()
            for digest, text in rows:
                if len(out) >= limit:
                    break
                out.setdefault(digest, text)
        return out

    def pending_count(self) -> int:
        """Chunk texts waiting for a vector (those no chunk uses any more included)."""
        return int(self.db.conn.execute("SELECT count(*) FROM pending_embeddings").fetchone()[0])
