"""Chunk texts reach the model in length-sorted groups bounded by a token budget (issue 12 item 5)."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from kbls.indexing.embed import Embedder
from kbls.indexing.embed_batches import TOKEN_BUDGET, embed_grouped, length_groups


@given(st.lists(st.integers(min_value=0, max_value=300), max_size=200), st.integers(min_value=1, max_value=64))
def test_groups_cover_every_text_once_within_both_bounds(lengths: list[int], batch_size: int) -> None:
    groups = length_groups(lengths, batch_size, TOKEN_BUDGET)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    for group in groups:
        longest = max(max(lengths[i], 1) for i in group)
        assert len(group) <= batch_size
        assert len(group) == 1 or len(group) * longest <= TOKEN_BUDGET
        assert [lengths[i] for i in group] == sorted(lengths[i] for i in group)


def test_short_texts_go_32_at_a_time_and_long_ones_8() -> None:
    groups = length_groups([20] * 64 + [256] * 16, 32, TOKEN_BUDGET)
    assert [len(g) for g in groups] == [32, 32, 8, 8]


def test_vectors_come_back_in_input_order() -> None:
    texts = [f"text {i}" for i in range(50)]
    rng = random.Random(1)
    lengths = {t: rng.randint(1, 300) for t in texts}
    seen: list[list[str]] = []

    def embed(group: list[str]) -> np.ndarray:
        seen.append(group)
        return np.array([[float(t.split()[1])] for t in group], dtype=np.float32)

    out = embed_grouped(texts, lambda ts: [lengths[t] for t in ts], embed, batch_size=32, dimension=1)
    assert out[:, 0].tolist() == list(range(50))
    assert len(seen) > 1


def test_grouped_vectors_equal_one_by_one_vectors(embedder: Embedder) -> None:
    rng = random.Random(7)
    words = ["ownership", "borrow", "lifetime", "trait", "closure", "iterator", "vector", "string", "slice", "module", "crate"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 180))) for _ in range(40)]
    grouped = embedder.embed_passages(texts)
    single = np.vstack([embedder.embed_passages([t]) for t in texts])
    assert grouped.shape == (40, embedder.dimension)
    assert np.allclose(grouped, single, atol=1e-3)
