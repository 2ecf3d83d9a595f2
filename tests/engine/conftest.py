"""Fixtures of the engine tests: engines on the shared real model, stores in tmp_path only.

The model (`embedder`) and the private cache come from `tests/conftest.py`; tests that count
what the model was given wrap their own engine's embedder through `count_embedded`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from tests.support.corpus import write
from tests.support.model import EmbedCounter, indexed_engine

from kbls.config import Config
from kbls.engine import Engine
from kbls.indexing.embed import Embedder


@pytest.fixture(scope="session")
def tokenizer_only() -> Embedder:
    """The bundled model's tokenizer without the ONNX session: for pure chunker tests."""
    return Embedder()


@pytest.fixture
def make_engine(tmp_path: Path, embedder: Embedder) -> Iterator[Callable[..., Engine]]:
    """Engine(root) with its store in tmp_path and the shared embedder; closed after the test."""
    engines: list[Engine] = []

    def factory(
        root: Path, *, config: Config | None = None, store_dir: Path | Literal["tmp"] | None = "tmp", **kwargs: Any
    ) -> Engine:
        """store_dir: "tmp" (default) a fresh folder in tmp_path; None: as the config says."""
        where = tmp_path / f"store-{len(engines)}" if isinstance(store_dir, str) else store_dir
        engine = Engine(root, config=config, store_dir=where, embedder=embedder, **kwargs)
        engines.append(engine)
        return engine

    yield factory
    for engine in engines:
        engine.close()


@pytest.fixture
def count_embedded(monkeypatch: pytest.MonkeyPatch) -> Callable[[Engine], EmbedCounter]:
    """count_embedded(engine) -> EmbedCounter recording what the model is given."""
    return lambda engine: EmbedCounter(engine, monkeypatch)


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


#: a small knowledge base: links, tags, types, three kinds of file.
NOTES = {
    "rust/ownership.md": """
        ---
        title: Ownership in Rust
        tags: [rust, memory]
        type: concept
        aliases: [ownership]
        ---
        # Ownership in Rust

        Every value in Rust has a single owner. When the owner goes out of scope, the value is
        dropped and its memory is freed. See also [[Borrowing]] for references.

        ## Moves

        Assigning a `String` to another variable moves it: the first variable can no longer be
        used. After a move, the new binding owns the heap data and the old one is invalid.
        """,
    "rust/borrowing.md": """
        ---
        title: Borrowing
        tags: [rust]
        ---
        # Borrowing

        References let you use a value without taking ownership of it. Read
        [the ownership note](ownership.md) first.

        ## Mutable references

        You can have only one mutable reference to a particular piece of data at a time, which
        prevents data races at compile time. The borrow checker enforces this rule.
        """,
    "rust/lifetimes.md": """
        # Lifetimes

        ## Elision

        """ + " ".join(
            f"Lifetime elision rule {i} lets the compiler infer lifetimes of references in function signatures."
            for i in range(12)
        ) + """

        ## Annotations

        """ + " ".join(
            f"Explicit lifetime annotation example {i} ties the lifetimes of two references together." for i in range(12)
        ) + """

        ## Static

        """ + " ".join(f"The static lifetime case {i} means references live for the whole program." for i in range(12)) + "\n",
    "cooking/sourdough.md": """
        ---
        title: Sourdough bread
        tags: [baking, cooking]
        type: recipe
        ---
        # Sourdough bread

        A slow-fermented loaf leavened by a wild yeast starter instead of commercial yeast.

        ## Baking

        Bake in a preheated Dutch oven at 250 °C with the lid on for twenty minutes, then
        uncover and bake until the crust is deep brown. #crust
        """,
    "cooking/pasta.md": """
        # Fresh pasta

        Mix 100 g of flour per egg, knead for ten minutes until smooth, and rest the dough for
        half an hour wrapped in film. Roll it thin and cut tagliatelle.
        """,
    "travel/japan.md": """
        ---
        title: Trip to Japan
        tags: [travel]
        ---
        # Trip to Japan

        ## Rail pass

        The Japan Rail Pass covers most shinkansen lines; activate it at the airport office and
        reserve seats for the bullet train ahead of busy holidays.
        """,
    "travel/packing.txt": """
        Packing list for long trips

        Passport, charger, adapter plug, a light rain jacket, comfortable walking shoes, and a
        small first-aid kit with plasters and painkillers.
        """,
    "meeting-notes.rst": """
        Quarterly planning
        ==================

        Decisions
        ---------

        We agreed to migrate the backup server to the new data centre before the end of March
        and to rotate the on-call schedule weekly.
        """,
}


@pytest.fixture(scope="session")
def kb(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Engine]:
    """The NOTES corpus, indexed once with the real model; tests must not change it."""
    engine = indexed_engine(tmp_path_factory.mktemp("search"), NOTES, embedder)
    yield engine
    engine.close()
