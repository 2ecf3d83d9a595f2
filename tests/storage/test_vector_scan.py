"""The semantic scan at scale: the sign-bit prefilter with exact rescoring finds what the exact
scan finds, filters are honoured, the compact copy keeps cosines, and syncs follow the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from kbls.retrieval import vectors
from kbls.retrieval.vectors import PREFILTER_FROM, VectorIndex, closest, hamming, sign_bits
from kbls.storage.store import Store

DIMENSION = 384


def _clustered(n: int, seed: int) -> np.ndarray:
    """Unit vectors in topics (as embeddings of notes are), not uniform noise."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((64, DIMENSION), dtype=np.float32)
    rows = centres[rng.integers(0, 64, n)] + 0.9 * rng.standard_normal((n, DIMENSION), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def _embedding_like(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors in topics around a shared mean direction (MiniLM's vectors have a mean of norm
    0.36–0.58 on the shared sets), and queries as real ones are: a topic's gist plus much noise,
    near no vector in particular (a cosine of about 0.4 to the best), not a perturbed corpus row.
    At twice PREFILTER_FROM, rescoring 2,000 (5 %) instead of MIN_RESCORE gets a recall of 0.98."""
    rng = np.random.default_rng(seed)
    shared = rng.standard_normal(DIMENSION, dtype=np.float32)
    shared *= 1.2 / np.linalg.norm(shared)
    centres = rng.standard_normal((200, DIMENSION), dtype=np.float32) / np.sqrt(DIMENSION)
    noise = rng.standard_normal((n, DIMENSION), dtype=np.float32) / np.sqrt(DIMENSION)
    rows = shared + centres[rng.integers(0, 200, n)] + 3.0 * noise
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    gist = centres[rng.integers(0, 200, 40)] + 1.3 * rng.standard_normal((40, DIMENSION), dtype=np.float32) / np.sqrt(DIMENSION)
    queries = 0.6 * shared + gist
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return rows, queries


def _held(matrix: np.ndarray) -> VectorIndex:
    class _NoStore:
        dimension = DIMENSION

    index = VectorIndex(cast(Any, _NoStore()))
    index.sync = lambda: None  # type: ignore[method-assign]
    index.load(np.arange(1, len(matrix) + 1, dtype=np.int64) * 3, matrix)  # ids need not be dense
    return index


def test_hamming_counts_differing_sign_bits_and_closest_keeps_ties() -> None:
    rows = np.array([[1.0] * DIMENSION, [-1.0] * DIMENSION, [1.0] * 200 + [-1.0] * 184], dtype=np.float32)
    signs = sign_bits(rows)
    assert signs.shape == (DIMENSION // 64, 3)
    assert list(hamming(signs, sign_bits(rows[:1])[:, 0])) == [0, 384, 184]
    assert list(closest(np.array([5, 1, 3, 1, 9], dtype=np.uint16), 2)) == [1, 3]
    assert list(closest(np.array([5, 1, 3, 1, 9], dtype=np.uint16), 3)) == [1, 2, 3]


def test_the_prefilter_finds_the_exact_top_ten_for_queries_near_no_vector() -> None:
    matrix, queries = _embedding_like(PREFILTER_FROM * 2, 11)
    assert np.linalg.norm(matrix.mean(axis=0)) > 0.3, "not zero-mean, as embeddings are not"
    index = _held(matrix)
    recall, best = [], []
    for q in queries:
        exact = np.argsort(-(matrix @ q))[:10]
        best.append(float(matrix[exact[0]] @ q))
        recall.append(len({e for e, _ in index.top(q, 50)[:10]} & {(int(i) + 1) * 3 for i in exact}) / 10)
    assert float(np.median(best)) < 0.5, "the queries are not copies of stored vectors"
    assert np.mean(recall) >= 0.99 and min(recall) >= 0.9, recall


def test_the_prefilter_finds_the_exact_top_ten_at_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "COMPACT_FROM", PREFILTER_FROM)  # the float16 copy, at a test's size
    n = PREFILTER_FROM * 2
    matrix = _clustered(n, 3)
    index = _held(matrix)
    assert index._snapshot.rows.dtype == np.float16, "held compactly from COMPACT_FROM"
    assert np.allclose(index.top(matrix[9], 50, exact=True)[0][1], 1.0, atol=2e-3), "the exact scan of float16"
    rng = np.random.default_rng(4)
    recall = []
    for row in rng.integers(0, n, 30):
        q = matrix[row] + 0.6 * rng.standard_normal(DIMENSION, dtype=np.float32) / np.sqrt(DIMENSION)
        q /= np.linalg.norm(q)
        fast = index.top(q, 50)
        truth = {(int(i) + 1) * 3 for i in np.argsort(-(matrix @ q))[:10]}  # float32, every vector
        recall.append(len({e for e, _ in fast[:10]} & truth) / 10)
        assert all(abs(s - float(matrix[e // 3 - 1] @ q)) < 2e-3 for e, s in fast), "scores are cosines"
    assert np.mean(recall) >= 0.99, recall


def test_filters_choose_among_the_allowed_only() -> None:
    matrix = _clustered(PREFILTER_FROM + 5_000, 5)
    index = _held(matrix)
    q = matrix[7]
    allowed = np.arange(3, 3 * 5_000, 3)[::-1]  # unsorted, and more than MIN_RESCORE
    got = index.top(q, 20, allowed)
    assert got[0][0] == 8 * 3 and {e for e, _ in got} <= set(allowed.tolist())
    few = np.array([3 * 100, 3 * 200, 999_999])  # one id not held (pending)
    assert [e for e, _ in index.top(q, 5, few)] == sorted([300, 600], key=lambda e: -float(matrix[e // 3 - 1] @ q))
    assert index.top(q, 5, np.array([999_999])) == []
    assert set(index.similarities(q, [300, 999_999])) == {300}
    assert index.vectors([300, 600]).dtype == np.float32


def test_a_sync_appends_what_the_store_gained_and_drops_what_it_lost(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", model_id="test", dimension=DIMENSION, model_sha256=None)
    matrix = _clustered(50, 6)
    try:
        with store.db.atomic() as c:
            c.executemany("INSERT INTO embeddings(id, hash) VALUES (?, ?)", ((i + 1, f"h{i}") for i in range(40)))
            c.executemany(
                "INSERT INTO vec_embeddings(rowid, embedding) VALUES (?, ?)",
                ((i + 1, matrix[i].tobytes()) for i in range(40)),
            )
            c.execute("INSERT INTO embeddings(id, hash) VALUES (41, 'waiting')")
            c.execute("INSERT INTO pending_embeddings(embedding_id, text) VALUES (41, 'a text')")
        index = VectorIndex(store)
        index.sync()
        assert list(index.ids) == list(range(1, 41)), "a pending text has no vector yet"
        with store.db.atomic() as c:  # a filled mark comes back under a higher id; a vector is dropped
            c.execute("DELETE FROM pending_embeddings WHERE embedding_id = 41")
            c.execute("DELETE FROM embeddings WHERE id = 41")
            c.execute("INSERT INTO embeddings(id, hash) VALUES (42, 'waiting')")
            c.execute("INSERT INTO vec_embeddings(rowid, embedding) VALUES (42, ?)", (matrix[41].tobytes(),))
            c.execute("DELETE FROM vec_embeddings WHERE rowid = 5")
            c.execute("DELETE FROM embeddings WHERE id = 5")
        index.sync()
        assert list(index.ids) == [i for i in range(1, 41) if i != 5] + [42]
        assert np.allclose(index.vectors([42])[0], matrix[41])
        assert index.top(matrix[41], 1) == [(42, index.top(matrix[41], 1)[0][1])]
    finally:
        index.close()
        store.close()


def test_small_stores_are_scanned_exactly() -> None:
    matrix = _clustered(1_000, 7)
    index = _held(matrix)
    assert index._snapshot.rows.dtype == np.float32
    q = matrix[3]
    assert index.top(q, 10) == index.top(q, 10, exact=True)
    assert vectors.PREFILTER_FROM > 1_000
