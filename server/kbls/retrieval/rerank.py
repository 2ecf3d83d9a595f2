"""Optional second stage: a cross-encoder re-orders the best candidates of a search.

Off by default (`search.rerank.model` unset). When set, a fastembed `TextCrossEncoder` reads
the query with each of the top `search.rerank.candidates` chunks (breadcrumb and body) and its
relevance logit, squashed to 0..1, becomes the chunk's score. Its quality on notes was not
measured: no cross-encoder weights are available offline where kbls is developed.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Protocol

from kbls.config import RerankConfig, user_cache_dir
from kbls.errors import ModelError


class CrossEncoder(Protocol):
    def rerank(self, query: str, documents: Sequence[str], batch_size: int = 64) -> list[float]: ...


class _FastembedCrossEncoder:
    """Adapts fastembed's lazy iterable of logits to a list."""

    def __init__(self, name: str, path: str | None, threads: int | None) -> None:
        from fastembed.rerank.cross_encoder import TextCrossEncoder

        self._model = TextCrossEncoder(
            name, cache_dir=str(user_cache_dir() / "models"), threads=threads, specific_model_path=path
        )

    def rerank(self, query: str, documents: Sequence[str], batch_size: int = 64) -> list[float]:
        return [float(s) for s in self._model.rerank(query, list(documents), batch_size=batch_size)]


def _sigmoid(logit: float) -> float:
    if logit >= 0:
        return 1.0 / (1.0 + math.exp(-logit))
    z = math.exp(logit)
    return z / (1.0 + z)


class Reranker:
    """Loads the configured cross-encoder on first use; thread-safe."""

    def __init__(self, config: RerankConfig, threads: int | None = None) -> None:
        self.config = config
        self._threads = threads
        self._model: CrossEncoder | None = None
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.config.model is not None

    def _load(self) -> CrossEncoder:
        with self._lock:
            if self._model is None:
                name = self.config.model
                if name is None:
                    raise ModelError("no reranker model is configured (search.rerank.model)")
                try:
                    self._model = _FastembedCrossEncoder(name, self.config.path, self._threads)
                except Exception as exc:  # fastembed raises bare ValueError/OSError subclasses
                    raise ModelError(f"cannot load reranker model {name!r}: {exc}") from exc
            return self._model

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        """Relevance of each document to `query`, 0..1 (the sigmoid of the model's logit)."""
        if not documents:
            return []
        return [_sigmoid(logit) for logit in self._load().rerank(query, documents)]
