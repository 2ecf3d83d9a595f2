"""Several daemons on one store, and cancellation of superseded searches."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcRequestCancelled
from tests.support.corpus import write_notes
from tests.support.lsp_client import LspSession


def test_two_daemons_on_one_root_both_answer_while_one_indexes(workspace: Path, tmp_path: Path) -> None:
    write_notes(workspace, 60)
    first = LspSession([workspace], tmp_path, name="first")
    second = LspSession([workspace], tmp_path, name="second")
    try:
        answered_while_indexing = {"first": 0, "second": 0}
        slowest = 0.0
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            states = []
            for name, session in (("first", first), ("second", second)):
                started = time.monotonic()
                result = session.search("river garden lantern")
                slowest = max(slowest, time.monotonic() - started)
                states.append(result.index.state)
                if result.index.state == "indexing":
                    answered_while_indexing[name] += 1
            if states == ["ready", "ready"]:
                break
            time.sleep(0.05)
        assert answered_while_indexing["first"] and answered_while_indexing["second"], answered_while_indexing
        assert slowest < 5.0
        a, b = first.wait_ready(), second.wait_ready()
        assert a.roots[0].chunks == b.roots[0].chunks > 120
        # One wrote, the other found everything stored: no chunk was embedded twice.
        assert a.embedded_since_start + b.embedded_since_start == a.roots[0].chunks
        assert first.search("river garden lantern").hits and second.search("river garden lantern").hits
        for session in (first, second):
            shown = [p for m, p in session.notifications if m == "window/showMessage"]
            assert not shown, shown
            assert "database is locked" not in session.log_file.read_text()
    finally:
        first.close()
        second.close()


def test_cancelled_search_gets_no_result(ready: LspSession) -> None:
    long_query = " ".join(["ownership borrowing reference lifetime move clone"] * 80)
    slow = ready.send("kb/search", {"query": long_query, "limit": 200}, "slow-1")
    superseded = ready.send("kb/search", {"query": "sourdough starter"}, "superseded-1")
    ready.cancel("superseded-1")
    assert slow.result(30)["hits"]
    with pytest.raises(JsonRpcRequestCancelled):
        superseded.result(30)
    # The daemon carries on.
    assert ready.paths_found("sourdough starter", limit=1) == ["cooking/sourdough.md"]
