"""An in-memory copy of a store's vectors for fast nearest-neighbour search (ADR 0001).

sqlite-vec's brute-force float cosine scan is ~100 ms at 100k×384 on these machines; numpy over
an in-memory copy is a few ms. Up to PREFILTER_FROM vectors a query is one exact matrix-vector
product. Above, every vector is ranked by the Hamming distance between its sign bits and the
query's (48 bytes a vector, popcount over 64-bit words), and only the closest RESCORE_SHARE (at
least MIN_RESCORE) are rescored by their cosine: recall@10 against the exact scan is in
docs/benchmarks.md. The sign bits are of the vectors themselves: centring them about the corpus
mean lowered recall on the shared sets' real vectors (ADR 0001). The copy is float32 up to
COMPACT_FROM vectors (307 MB at 200k×384): numpy has no BLAS path for float16, and converting
float16 rows cost more than the float32 product itself. Above, the copy is float16 (an error below
1e-3 in a cosine) and a scan converts it a block at a time.

The copy is kept in sync with the store through `PRAGMA data_version` on a connection of its
own, so writes by this process's indexer and by other processes on the same store are both
picked up. Embedding ids only grow (a chunk text's vector written later gets a new id), so a sync
reads the vectors above the last id it holds; a deletion rebuilds the id set. Queries read one
immutable snapshot (ids, rows, sign bits), replaced whole by a sync.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kbls.storage.connection import Connection
    from kbls.storage.store import Store

#: from this many vectors (of those a query may match) the sign-bit prefilter chooses what is rescored
PREFILTER_FROM = 20_000
#: the share of the vectors rescored by cosine after the prefilter, and the least number: at 200k,
#: 5 % found the exact top ten as 10 % did (recall@10 0.995-1.000) for the shared sets' real
#: queries on vectors drawn like theirs, in 0.53-0.61 of the time (ADR 0001)
RESCORE_SHARE = 0.05
MIN_RESCORE = 4_000
#: from this many vectors the copy is float16
COMPACT_FROM = 400_000
#: rows read from the store per step of a load
BLOCK = 2048

#: embeddings with a vector: those not waiting for one (`kbls.storage.pending`)
VECTOR_IDS_SQL = "SELECT id FROM embeddings WHERE id NOT IN (SELECT embedding_id FROM pending_embeddings) ORDER BY id"
VECTOR_COUNT_SQL = "SELECT (SELECT count(*) FROM embeddings) - (SELECT count(*) FROM pending_embeddings)"


def sign_bits(rows: np.ndarray) -> np.ndarray:
    """The sign bits of `rows` (n × dimension) as 64-bit words, one column per row: (words, n)."""
    packed = np.packbits(rows > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed.view(np.uint64).T)


def hamming(signs: np.ndarray, query_bits: np.ndarray) -> np.ndarray:
    """Bits differing between each column of `signs` and `query_bits` (one word per row)."""
    total = np.zeros(signs.shape[1], dtype=np.uint16)
    word = np.empty(signs.shape[1], dtype=np.uint64)
    count = np.empty(signs.shape[1], dtype=np.uint8)
    for i in range(signs.shape[0]):
        np.bitwise_xor(signs[i], query_bits[i], out=word)
        np.bitwise_count(word, out=count)
        np.add(total, count, out=total, casting="unsafe")
    return total


def closest(distances: np.ndarray, wanted: int) -> np.ndarray:
    """Positions of at least `wanted` smallest `distances` (all of those at the cut-off distance)."""
    cumulative = np.cumsum(np.bincount(distances))
    cut = int(np.searchsorted(cumulative, min(wanted, len(distances))))
    found: np.ndarray = np.flatnonzero(distances <= cut)
    return found


def products(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """`rows @ q` in float32 (float16 rows converted a block at a time, never all at once)."""
    if rows.dtype == np.float32:
        return np.asarray(rows @ q)
    out = np.empty(len(rows), dtype=np.float32)
    for start in range(0, len(rows), BLOCK * 4):
        block = rows[start : start + BLOCK * 4]
        np.matmul(block.astype(np.float32), q, out=out[start : start + len(block)])
    return out


@dataclass(frozen=True)
class _Snapshot:
    """The vectors at one sync: sorted embedding ids, their rows (float32 or float16) and sign bits."""

    ids: np.ndarray
    rows: np.ndarray
    signs: np.ndarray


class VectorIndex:
    """The vectors of one store, searched exactly or through the sign-bit prefilter."""

    def __init__(self, store: Store) -> None:
        self.store = store
        dimension = store.dimension
        self._snapshot = _Snapshot(
            np.zeros(0, dtype=np.int64), np.zeros((0, dimension), dtype=np.float32), sign_bits(np.zeros((0, dimension)))
        )
        self._version: int | None = None
        self._lock = threading.Lock()
        self._conn: Connection | None = None

    @property
    def ids(self) -> np.ndarray:
        return self._snapshot.ids

    @property
    def matrix(self) -> np.ndarray:
        """The rows as float32 (a copy when they are held as float16)."""
        return self._snapshot.rows.astype(np.float32, copy=False)

    def load(self, ids: np.ndarray, matrix: np.ndarray) -> None:
        """Hold `matrix` (rows of sorted `ids`) as the vectors (benchmarks; `sync` reads the store)."""
        rows = matrix.astype(np.float16 if len(ids) >= COMPACT_FROM else np.float32)
        self._snapshot = _Snapshot(np.asarray(ids, dtype=np.int64), rows, sign_bits(matrix))

    def _connection(self) -> Connection:
        if self._conn is None:
            self._conn = self.store.open_connection()
        return self._conn

    def sync(self) -> None:
        """Bring the copy up to date with the store (cheap when nothing changed)."""
        with self._lock:
            conn = self._connection()
            version = int(conn.execute("PRAGMA data_version").fetchone()[0])
            if version == self._version:
                return
            self._version = version
            snap = self._snapshot
            count = conn.execute(VECTOR_COUNT_SQL).fetchone()[0]
            if len(snap.ids) and count < len(snap.ids):
                snap = _keep(snap, self._all_ids(conn))
            last = int(snap.ids[-1]) if len(snap.ids) else 0
            snap = self._read_after(conn, snap, last)
            if len(snap.ids) != count:
                # Deletions and insertions both happened: rebuild the id set exactly.
                snap = _keep(snap, self._all_ids(conn))
            self._snapshot = snap

    def _read_after(self, conn: Connection, snap: _Snapshot, last: int) -> _Snapshot:
        """`snap` with the vectors of rowid > `last` appended, read block by block into arrays of
        the final size and type: reading 50k×384 at once held the rows, their join and the copy
        together (~3× the matrix)."""
        expected = conn.execute("SELECT count(*) FROM vec_embeddings WHERE rowid > ?", (last,)).fetchone()[0]
        if not expected:
            return snap
        held = len(snap.ids)
        total = held + expected
        dimension = self.store.dimension
        dtype = np.float16 if total >= COMPACT_FROM else np.float32
        ids = np.empty(total, dtype=np.int64)
        rows = np.empty((total, dimension), dtype=dtype)
        signs = np.empty((snap.signs.shape[0], total), dtype=np.uint64)
        ids[:held], rows[:held], signs[:, :held] = snap.ids, snap.rows, snap.signs
        cursor = conn.execute("SELECT rowid, embedding FROM vec_embeddings WHERE rowid > ? ORDER BY rowid", (last,))
        filled = held
        while found := cursor.fetchmany(BLOCK):
            found = found[: total - filled]  # rows committed since the count wait for the next sync
            if not found:
                break
            end = filled + len(found)
            block = np.frombuffer(b"".join(r[1] for r in found), dtype=np.float32).reshape(len(found), dimension)
            ids[filled:end] = [r[0] for r in found]
            rows[filled:end] = block
            signs[:, filled:end] = sign_bits(block)
            filled = end
        return _Snapshot(ids[:filled], rows[:filled], signs[:, :filled])

    @staticmethod
    def _all_ids(conn: Connection) -> np.ndarray:
        found = conn.execute(VECTOR_IDS_SQL).fetchall()
        return np.fromiter((r[0] for r in found), dtype=np.int64, count=len(found))

    def _positions(self, snap: _Snapshot, embedding_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions in `snap` of the ids held, which of `embedding_ids` those are)."""
        if not len(snap.ids):
            return np.zeros(0, dtype=np.int64), np.zeros(len(embedding_ids), dtype=bool)
        positions = np.clip(np.searchsorted(snap.ids, embedding_ids), 0, len(snap.ids) - 1)
        found = snap.ids[positions] == embedding_ids
        return positions[found], found

    def vectors(self, embedding_ids: list[int]) -> np.ndarray:
        """The float32 vectors of those of `embedding_ids` held, in their order."""
        self.sync()
        snap = self._snapshot
        positions, _ = self._positions(snap, np.asarray(embedding_ids, dtype=np.int64))
        chosen: np.ndarray = snap.rows[positions].astype(np.float32)
        return chosen

    def similarities(self, query: np.ndarray, embedding_ids: list[int]) -> dict[int, float]:
        """Cosine similarity of `query` to each stored vector of `embedding_ids` (absent ids left out)."""
        self.sync()
        snap = self._snapshot
        if not embedding_ids or not len(snap.ids):
            return {}
        wanted = np.asarray(embedding_ids, dtype=np.int64)
        positions, found = self._positions(snap, wanted)
        scores = snap.rows[positions].astype(np.float32) @ query.astype(np.float32)
        return {int(e): float(s) for e, s in zip(wanted[found], scores, strict=True)}

    def top(
        self, query: np.ndarray, n: int, allowed: np.ndarray | None = None, *, exact: bool = False
    ) -> list[tuple[int, float]]:
        """(embedding id, cosine similarity) of the `n` nearest vectors (of `allowed` ids, when
        given), best first; `exact` scans every vector (the prefilter's reference)."""
        self.sync()
        snap = self._snapshot
        if not len(snap.ids) or n <= 0:
            return []
        q = query.astype(np.float32)
        if allowed is None:
            candidates: np.ndarray | None = None
            count = len(snap.ids)
        else:
            candidates, _ = self._positions(snap, np.unique(np.asarray(allowed, dtype=np.int64)))
            count = len(candidates)
            if not count:
                return []
        if not exact and count >= PREFILTER_FROM:
            signs = snap.signs if candidates is None else snap.signs[:, candidates]
            near = closest(hamming(signs, sign_bits(q[None, :])[:, 0]), max(int(count * RESCORE_SHARE), MIN_RESCORE, n))
            candidates = near if candidates is None else candidates[near]
        if candidates is None:
            scores = products(snap.rows, q)
            candidates = np.arange(len(snap.ids))
        else:
            scores = products(snap.rows[candidates], q)
        n = min(n, len(scores))
        best = np.argpartition(-scores, n - 1)[:n]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(snap.ids[candidates[i]]), float(scores[i])) for i in best]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _keep(snap: _Snapshot, ids: np.ndarray) -> _Snapshot:
    """`snap` without the vectors whose id is not in `ids` (new arrays: queries may hold the old)."""
    keep = np.isin(snap.ids, ids)
    return _Snapshot(snap.ids[keep], snap.rows[keep], snap.signs[:, keep])
