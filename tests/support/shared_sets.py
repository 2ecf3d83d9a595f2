"""The four shared evaluation workspaces (../shared/eval beside the clone: a book, personal
notes, technical docs with front matter and shortcodes, a wiki-linked vault), each extracted and
indexed by the bundled model once a test session: the quality guard and the team store's
comparison read the same store (indexing til and otel-docs takes minutes each on two cores)."""

from __future__ import annotations

import os
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from kbls.engine import Engine
from kbls.indexing.embed import Embedder

REPO = Path(__file__).resolve().parents[2]
EVAL_DIR = Path(os.environ.get("KBLS_EVAL_DIR", REPO.parent / "shared" / "eval"))
SETS = ("rust-by-example", "til", "otel-docs", "pkm")


@dataclass(frozen=True)
class IndexedSet:
    """A shared set's workspace and the store it was indexed into."""

    name: str
    root: Path
    store: Path


class SharedSets:
    """Each set indexed on first use, then handed out again; a missing set skips the test."""

    def __init__(self, base: Path, embedder: Embedder) -> None:
        self.base = base
        self.embedder = embedder
        self._indexed: dict[str, IndexedSet] = {}

    def get(self, name: str) -> IndexedSet:
        if name in self._indexed:
            return self._indexed[name]
        archive = EVAL_DIR / f"{name}-src.tgz"
        if not archive.exists():
            print(f"\n{name} skipped: {archive} not found (the shared eval sets live beside the clone)")
            pytest.skip(f"no shared eval set at {EVAL_DIR}")
        folder = self.base / name
        with tarfile.open(archive) as tar:
            tar.extractall(folder, filter="data")
        indexed = IndexedSet(name, folder / "src", folder / "store")
        engine = Engine(indexed.root, store_dir=indexed.store, embedder=self.embedder)
        try:
            engine.index()
        finally:
            engine.close()
        self._indexed[name] = indexed
        return indexed
