"""Fixtures of the engine tests: one real Embedder per session, stores in tmp_path only.

The bundled model (all-MiniLM-L6-v2 int8) is loaded once and shared; tests that count what
it was given wrap `embed_passages` on their own engine's embedder through `count_embedded`.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Callable

import pytest

from kbls.config import Config
from kbls.embed import Embedder
from kbls.engine import Engine


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may write the user's cache: the default store dir lands in a temp folder."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real bundled model, loaded once for the whole session."""
    model = Embedder()
    model.load()
    return model


@pytest.fixture(scope="session")
def tokenizer_only() -> Embedder:
    """The bundled model's tokenizer without the ONNX session: for pure chunker tests."""
    return Embedder()


def write(root: Path, rel: str, text: str) -> Path:
    """Write a note (dedented) under `root`, creating folders."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


class EmbedCounter:
    """Wraps one engine's `embed_passages` and keeps every text it was given."""

    def __init__(self, engine: Engine) -> None:
        self.texts: list[str] = []
        original = engine.embedder.embed_passages

        def recording(texts):
            self.texts.extend(texts)
            return original(texts)

        self._engine = engine
        engine.embedder.embed_passages = recording

    def take(self) -> list[str]:
        """The texts embedded since the last call."""
        texts, self.texts = self.texts, []
        return texts

    def restore(self) -> None:
        del self._engine.embedder.embed_passages


@pytest.fixture
def make_engine(tmp_path: Path, embedder: Embedder) -> Callable[..., Engine]:
    """Engine(root) with its store in tmp_path and the shared embedder; closed after the test."""
    engines: list[Engine] = []
    counters: list[EmbedCounter] = []

    def factory(root: Path, *, config: Config | None = None, store_dir: Path | None | str = "tmp", **kwargs) -> Engine:
        """store_dir: "tmp" (default) a fresh folder in tmp_path; None: as the config says."""
        if store_dir == "tmp":
            store_dir = tmp_path / f"store-{len(engines)}"
        engine = Engine(root, config=config, store_dir=store_dir, embedder=embedder, **kwargs)
        engines.append(engine)
        return engine

    factory.counters = counters  # type: ignore[attr-defined]
    yield factory
    for counter in counters:
        counter.restore()
    for engine in engines:
        engine.close()


@pytest.fixture
def count_embedded(make_engine) -> Callable[[Engine], EmbedCounter]:
    """count_embedded(engine) -> EmbedCounter recording what the model is given."""

    def wrap(engine: Engine) -> EmbedCounter:
        counter = EmbedCounter(engine)
        make_engine.counters.append(counter)
        return counter

    return wrap


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty workspace root (the stores live beside it, not inside)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    return folder


@pytest.fixture
def note(root: Path) -> Callable[[str, str], Path]:
    """note(rel, text): write a dedented note under `root`."""
    return lambda rel, text: write(root, rel, text)
