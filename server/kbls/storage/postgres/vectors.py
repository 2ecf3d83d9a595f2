"""Nearest vectors in the team store (`VectorSearch`): pgvector's HNSW index, or an exact scan.

Without filters a search walks the HNSW index (`vector_cosine_ops`) with `hnsw.ef_search` at
least 400 and twice the hits asked for (pgvector 0.6 returns at most ef_search rows, 40 by
default, fewer than the hybrid ranking asks for). Recall@10 against the exact scan at 400, the
shared sets' real queries on 100k vectors drawn like their real ones: 0.996 (0.990 at 200); on
random 384-d vectors, which no model makes, 0.96 at 10k but 0.47 at 100k (benchmarks/bench_team.py).
With filters the engine passes the embeddings the filters allow (`allowed_embeddings`,
decided in SQL) and the search is exact over them: an HNSW scan filtered afterwards would
return fewer than asked whenever the filter is selective (pgvector >= 0.8's iterative scans
lift that; this store targets 0.6).
"""

from __future__ import annotations

import numpy as np

from kbls.storage.postgres.connection import PgPool

#: pgvector's upper bound of hnsw.ef_search.
MAX_EF_SEARCH = 1000
MIN_EF_SEARCH = 400
#: the HNSW scan is an index scan: without index scans the search is exact.
EXACT = "SET LOCAL enable_indexscan = off"


class PgVectors:
    """The vectors of one team store, searched where they are (nothing is copied to memory)."""

    def __init__(self, pool: PgPool, root_id: int, dimension: int) -> None:
        self.pool = pool
        self.root_id = root_id
        self.dimension = dimension

    def sync(self) -> None:
        """Nothing to copy: the vectors are searched in the database."""

    def top(self, query: np.ndarray, n: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """(embedding id, cosine similarity) of the `n` nearest vectors, best first."""
        vector = np.asarray(query, dtype=np.float32)
        if allowed is not None:
            if not len(allowed):
                return []
            rows = self.pool.fetch(
                "SELECT id, 1 - (embedding <=> %s) FROM embeddings WHERE id = ANY(%s) ORDER BY embedding <=> %s, id LIMIT %s",
                (vector, [int(i) for i in allowed], vector, n),
                settings=[EXACT],
            )
        else:
            ef = min(MAX_EF_SEARCH, max(MIN_EF_SEARCH, 2 * n))
            rows = self.pool.fetch(
                "SELECT id, 1 - (embedding <=> %s) AS similarity FROM embeddings ORDER BY embedding <=> %s LIMIT %s",
                (vector, vector, n),
                settings=[f"SET LOCAL hnsw.ef_search = {int(ef)}"],
            )
        return [(int(i), float(s)) for i, s in rows]

    def exact_top(self, query: np.ndarray, n: int) -> list[tuple[int, float]]:
        """`top` without the index: what HNSW recall is measured against."""
        vector = np.asarray(query, dtype=np.float32)
        rows = self.pool.fetch(
            "SELECT id, 1 - (embedding <=> %s) FROM embeddings ORDER BY embedding <=> %s, id LIMIT %s",
            (vector, vector, n),
            settings=[EXACT],
        )
        return [(int(i), float(s)) for i, s in rows]

    def similarities(self, query: np.ndarray, embedding_ids: list[int]) -> dict[int, float]:
        if not embedding_ids:
            return {}
        rows = self.pool.fetch(
            "SELECT id, 1 - (embedding <=> %s) FROM embeddings WHERE id = ANY(%s)",
            (np.asarray(query, dtype=np.float32), [int(i) for i in embedding_ids]),
        )
        return {int(i): float(s) for i, s in rows}

    def vectors(self, embedding_ids: list[int]) -> np.ndarray:
        """The stored vectors of `embedding_ids` in that order (absent ids left out)."""
        rows = self.pool.fetch("SELECT id, embedding FROM embeddings WHERE id = ANY(%s)", ([int(i) for i in embedding_ids],))
        found = {int(i): np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=np.float32) for i, v in rows}
        chosen = [found[i] for i in embedding_ids if i in found]
        return np.vstack(chosen) if chosen else np.zeros((0, self.dimension), dtype=np.float32)

    def close(self) -> None:
        """Nothing of its own: the store's pool holds the connections."""
