"""The bundled model (all-MiniLM-L6-v2 int8) for tests: loaded once, small corpora indexed with
it, and what it embeds recorded."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest
from tests.support.corpus import write

from kbls.engine import Engine
from kbls.indexing.embed import Embedder


def load_embedder() -> Embedder:
    """The real bundled model with its ONNX session loaded."""
    model = Embedder()
    model.load()
    return model


def indexed_engine(base: Path, notes: Mapping[str, str], embedder: Embedder) -> Engine:
    """`notes` (path -> dedented text) written under `base/notes`, indexed into `base/store`."""
    for rel, text in notes.items():
        write(base / "notes", rel, text)
    engine = Engine(base / "notes", store_dir=base / "store", embedder=embedder)
    engine.index()
    return engine


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
