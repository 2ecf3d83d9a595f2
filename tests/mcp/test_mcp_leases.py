"""`kbls mcp` in-process: a search running on a root's engine keeps it open while another tool
call finds the store rebuilt (`kbls index --rebuild`) and opens the new one.

The MCP SDK runs tool calls on anyio worker threads concurrently; the second call closed the
replaced engine under the first (its SQLite connections closed mid-query). The first search is
held inside the engine (`tests/support/held.py`), so the race is the same every run.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from tests.support.corpus import make_workspace
from tests.support.held import held_search

from kbls.engine import Engine
from kbls.indexing.embed import Embedder
from kbls.limits import Mode
from kbls.mcp.local import LocalBackend
from kbls.query.filters import Filters
from kbls.results import Hit

QUERY = "who owns a value after it is moved"


def _index(root: Path, embedder: Embedder) -> None:
    engine = Engine(root, embedder=embedder)
    try:
        engine.index()
    finally:
        engine.close()


def test_a_search_held_inside_the_engine_keeps_it_open_while_a_rebuilt_store_is_opened(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(tmp_path, "notes")
    _index(root, embedder)
    backend = LocalBackend()
    try:
        assert backend.search([root], QUERY, limit=5, mode=Mode.HYBRID, filters=Filters())[0]
        with held_search(monkeypatch, "held-mcp-search") as held:
            found: list[list[Hit]] = []
            thread = threading.Thread(
                target=lambda: found.append(backend.search([root], QUERY, limit=5, mode=Mode.HYBRID, filters=Filters())[0]),
                name="held-mcp-search",
            )
            thread.start()
            assert held.entered.wait(30)
            Engine.rebuild(root)  # `kbls index --rebuild`: the store folder deleted, then built again
            _index(root, embedder)
            rebuilt = len(held.closed)  # the indexing engine's own close
            # Another tool call notices the new store and opens it; the held search keeps the old one.
            hits, _ = backend.search([root], QUERY, limit=5, mode=Mode.HYBRID, filters=Filters())
            assert hits
            assert len(held.closed) == rebuilt  # the replaced engine is not closed under the search
            held.release.set()
            thread.join(30)
            assert found and found[0]  # the held search answered from the old store
            assert len(held.closed) == rebuilt + 1 and held.closed_under_search == []
    finally:
        backend.close()
