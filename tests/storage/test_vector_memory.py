"""Loading a store's vectors into `VectorIndex` (issue 12 item 5): the matrix is filled block by
block, so loading never holds the rows, their join and the matrix at once (that was ~3x the
matrix at 50k chunks); and what it loads is exactly what the store holds.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np

from kbls.retrieval.vectors import VectorIndex
from kbls.storage.store import Store

DIMENSION = 384
COUNT = 20_000  # 31 MB of float32: large next to one block of 2,048 rows (6 MB of rows and their join)


def _store_with_vectors(directory: Path, matrix: np.ndarray) -> Store:
    store = Store(directory, model_id="test", dimension=DIMENSION, model_sha256=None)
    with store.db.atomic() as c:
        c.executemany("INSERT INTO embeddings(id, hash) VALUES (?, ?)", ((i + 1, f"h{i}") for i in range(len(matrix))))
        c.executemany(
            "INSERT INTO vec_embeddings(rowid, embedding) VALUES (?, ?)",
            ((i + 1, row.tobytes()) for i, row in enumerate(matrix)),
        )
    return store


def test_loading_the_vectors_holds_about_one_matrix(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((COUNT, DIMENSION), dtype=np.float32)
    store = _store_with_vectors(tmp_path / "store", matrix)
    index = VectorIndex(store)
    try:
        tracemalloc.start()  # numpy's buffers and Python's bytes are both traced
        index.sync()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert np.array_equal(index.ids, np.arange(1, COUNT + 1))
        assert np.array_equal(index.matrix, matrix)
        # one matrix plus one block of rows (1.2x); the rows, their join and the matrix at once were 3.1x
        assert peak < 1.5 * matrix.nbytes, f"loading {matrix.nbytes / 1e6:.0f} MB of vectors peaked at {peak / 1e6:.0f} MB"
    finally:
        index.close()
        store.close()


def test_vectors_added_later_are_appended_block_by_block(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    first = rng.standard_normal((3_000, DIMENSION), dtype=np.float32)
    store = _store_with_vectors(tmp_path / "store", first)
    index = VectorIndex(store)
    try:
        index.sync()
        later = rng.standard_normal((5_000, DIMENSION), dtype=np.float32)
        with store.db.atomic() as c:
            c.executemany(
                "INSERT INTO embeddings(id, hash) VALUES (?, ?)", ((3_001 + i, f"later{i}") for i in range(len(later)))
            )
            c.executemany(
                "INSERT INTO vec_embeddings(rowid, embedding) VALUES (?, ?)",
                ((3_001 + i, row.tobytes()) for i, row in enumerate(later)),
            )
        index.sync()
        assert np.array_equal(index.ids, np.arange(1, 8_001))
        assert np.array_equal(index.matrix, np.vstack([first, later]))
    finally:
        index.close()
        store.close()
