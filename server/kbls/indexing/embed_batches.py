"""Chunk texts grouped for the model by length: bounded memory without small batches everywhere.

onnxruntime pads a batch to its longest text and its memory grows with batch x length (and
attention with length squared): 32 texts of 256 tokens took `kbls index` to ~1 GB, while most
chunks are much shorter. Texts are sorted by token count (little padding) and cut into groups of
at most `batch_size` texts and at most `token_budget` padded tokens (texts x longest), so short
texts still go 32 at a time and long ones 8 at a time. The vectors come back in input order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

#: padded tokens per model call: 8 texts of 256 tokens (the daemon's memory-safe batch at full
#: length), or 32 texts of 64
TOKEN_BUDGET = 2048


def length_groups(lengths: Sequence[int], batch_size: int, token_budget: int = TOKEN_BUDGET) -> list[list[int]]:
    """Indices of the texts, shortest first, cut into groups for one model call each."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        size = max(lengths[index], 1)
        wider = max(longest, size)
        if current and (len(current) >= batch_size or (len(current) + 1) * wider > token_budget):
            groups.append(current)
            current, wider = [], size
        current.append(index)
        longest = wider
    if current:
        groups.append(current)
    return groups


def embed_grouped(
    texts: Sequence[str],
    count_tokens: Callable[[Sequence[str]], list[int]],
    embed: Callable[[list[str]], np.ndarray],
    batch_size: int,
    dimension: int,
    token_budget: int = TOKEN_BUDGET,
) -> np.ndarray:
    """`embed` over length-sorted groups of `texts`; rows in the order of `texts`."""
    out = np.empty((len(texts), dimension), dtype=np.float32)
    for group in length_groups(count_tokens(texts), batch_size, token_budget):
        out[group] = embed([texts[i] for i in group])
    return out
