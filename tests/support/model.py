"""The bundled model (all-MiniLM-L6-v2 int8) for tests: loaded once, and what it embeds recorded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from kbls.engine import Engine
from kbls.indexing.embed import Embedder


def load_embedder() -> Embedder:
    """The real bundled model with its ONNX session loaded."""
    model = Embedder()
    model.load()
    return model


class EmbedCounter:
    """Wraps one engine's `embed_passages` (through `monkeypatch`, undone after the test) and keeps
    every text it was given."""

    def __init__(self, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
        self.texts: list[str] = []
        original = engine.embedder.embed_passages

        def recording(texts: Sequence[str]) -> np.ndarray:
            self.texts.extend(texts)
            return original(texts)

        monkeypatch.setattr(engine.embedder, "embed_passages", recording)

    def take(self) -> list[str]:
        """The texts embedded since the last call."""
        texts, self.texts = self.texts, []
        return texts
