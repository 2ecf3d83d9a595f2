"""The bundled model (all-MiniLM-L6-v2 int8) for tests: loaded once, and what it embeds recorded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kbls.engine import Engine
from kbls.indexing.embed import Embedder


def load_embedder() -> Embedder:
    """The real bundled model with its ONNX session loaded."""
    model = Embedder()
    model.load()
    return model


class EmbedCounter:
    """Wraps one engine's `embed_passages` and keeps every text it was given."""

    def __init__(self, engine: Engine) -> None:
        self.texts: list[str] = []
        original = engine.embedder.embed_passages

        def recording(texts: Sequence[str]) -> np.ndarray:
            self.texts.extend(texts)
            return original(texts)

        self._engine = engine
        # an instance attribute shadows the method until `restore`
        engine.embedder.embed_passages = recording  # type: ignore[method-assign]

    def take(self) -> list[str]:
        """The texts embedded since the last call."""
        texts, self.texts = self.texts, []
        return texts

    def restore(self) -> None:
        del self._engine.embedder.embed_passages
