"""An in-memory copy of a store's vectors for fast exact nearest-neighbour search.

sqlite-vec's brute-force float cosine scan is ~100 ms at 100k×384 on these machines; one numpy
matrix-vector product over normalized float32 vectors is a few ms (see docs/adr/). The copy is
kept in sync with the store through `PRAGMA data_version` on a connection of its own, so writes
by this process's indexer and by other processes on the same store are both picked up. Embedding
ids only grow (a pending text's vector is written under a new id), so a sync reads the vectors
above the last id it holds.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kbls.storage.connection import Connection
    from kbls.storage.store import Store


#: embeddings with a vector: those not waiting for one (`kbls.storage.pending`)
VECTOR_IDS_SQL = "SELECT id FROM embeddings WHERE id NOT IN (SELECT embedding_id FROM pending_embeddings) ORDER BY id"
VECTOR_COUNT_SQL = "SELECT (SELECT count(*) FROM embeddings) - (SELECT count(*) FROM pending_embeddings)"


class VectorIndex:
    """The vectors of one store as (sorted embedding ids, normalized float32 matrix)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, store.dimension), dtype=np.float32)
        self._version: int | None = None
        self._lock = threading.Lock()
        self._conn: Connection | None = None

    def _connection(self) -> Connection:
        if self._conn is None:
            self._conn = self.store.open_connection()
        return self._conn

    def _data_version(self) -> int:
        return int(self._connection().execute("PRAGMA data_version").fetchone()[0])

    def sync(self) -> None:
        """Bring the copy up to date with the store (cheap when nothing changed)."""
        with self._lock:
            version = self._data_version()
            if version == self._version:
                return
            self._version = version
            conn = self._connection()
            count = conn.execute(VECTOR_COUNT_SQL).fetchone()[0]
            last = int(self.ids[-1]) if len(self.ids) else 0
            if len(self.ids) and count < len(self.ids):
                keep = np.isin(self.ids, self._all_ids(conn))
                self.ids, self.matrix = self.ids[keep], self.matrix[keep]
            new_ids, new = self._read_after(conn, last)
            if len(new_ids):
                self.ids = np.concatenate([self.ids, new_ids]) if len(self.ids) else new_ids
                self.matrix = np.concatenate([self.matrix, new]) if len(self.matrix) else new
            if len(self.ids) != count:
                # Deletions and insertions both happened: rebuild the id set exactly.
                keep = np.isin(self.ids, self._all_ids(conn))
                self.ids, self.matrix = self.ids[keep], self.matrix[keep]

    def _read_after(self, conn: Connection, last: int) -> tuple[np.ndarray, np.ndarray]:
        """Vectors with rowid > `last`, read page by page into one preallocated array: reading
        50k×384 at once held the rows, their join and the copy together (~3× the matrix)."""
        expected = conn.execute("SELECT count(*) FROM vec_embeddings WHERE rowid > ?", (last,)).fetchone()[0]
        ids = np.empty(expected, dtype=np.int64)
        matrix = np.empty((expected, self.store.dimension), dtype=np.float32)
        cursor = conn.execute("SELECT rowid, embedding FROM vec_embeddings WHERE rowid > ? ORDER BY rowid", (last,))
        filled = 0
        while rows := cursor.fetchmany(2048):
            rows = rows[: expected - filled]  # rows committed since the count wait for the next sync
            if not rows:
                break
            end = filled + len(rows)
            ids[filled:end] = [r[0] for r in rows]
            matrix[filled:end] = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
                len(rows), self.store.dimension
            )
            filled = end
        return ids[:filled], matrix[:filled]

    @staticmethod
    def _all_ids(conn: Connection) -> np.ndarray:
        rows = conn.execute(VECTOR_IDS_SQL).fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def vectors(self, embedding_ids: list[int]) -> np.ndarray:
        self.sync()
        positions = np.searchsorted(self.ids, embedding_ids)
        positions = np.clip(positions, 0, max(len(self.ids) - 1, 0))
        found = self.ids[positions] == np.asarray(embedding_ids) if len(self.ids) else np.zeros(0, bool)
        chosen: np.ndarray = self.matrix[positions[found]]
        return chosen

    def similarities(self, query: np.ndarray, embedding_ids: list[int]) -> dict[int, float]:
        """Cosine similarity of `query` to each stored vector of `embedding_ids` (absent ids left out)."""
        self.sync()
        if not embedding_ids or not len(self.ids):
            return {}
        wanted = np.asarray(embedding_ids, dtype=np.int64)
        positions = np.clip(np.searchsorted(self.ids, wanted), 0, len(self.ids) - 1)
        found = self.ids[positions] == wanted
        scores = self.matrix[positions[found]] @ query.astype(np.float32)
        return {int(e): float(s) for e, s in zip(wanted[found], scores, strict=True)}

    def top(self, query: np.ndarray, n: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """(embedding id, cosine similarity) of the `n` nearest vectors, best first."""
        self.sync()
        ids, matrix = self.ids, self.matrix
        if not len(ids):
            return []
        scores = matrix @ query.astype(np.float32)
        if allowed is not None:
            mask = np.isin(ids, allowed)
            scores = np.where(mask, scores, -np.inf)
        n = min(n, len(ids))
        best = np.argpartition(-scores, n - 1)[:n]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(ids[i]), float(scores[i])) for i in best if np.isfinite(scores[i])]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
