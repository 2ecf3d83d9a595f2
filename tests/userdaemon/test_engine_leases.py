"""A CLI query through the per-user daemon holds its engine: a reopen of the root meanwhile (a
`.kbls.yaml` change, `kbls index --rebuild`) closes that engine only when the query is done.

The CLI's calls (`kbls.userdaemon.queries`) ran `engine.search` without the read guard the LSP
handlers had, so the reopen closed the SQLite connections under the running query (a SIGSEGV
that takes down the daemon every window shares). The query is held inside the engine
(`tests/support/held.py`) while the root is reopened, so the race is the same every run.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from tests.support.corpus import make_workspace
from tests.support.held import held_search

from kbls.daemon.service import Daemon
from kbls.errors import BeingReopenedError
from kbls.userdaemon import queries

QUERY = "who owns a value after it is moved"


def test_a_cli_query_held_inside_the_engine_keeps_it_open_through_a_reopen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(tmp_path, "notes")
    daemon = Daemon(watch=False)
    daemon.start([(root.as_uri(), root)])
    try:
        assert daemon.wait_idle(180)
        [old] = daemon.roots()
        query = queries.SearchQuery(root=str(root), query=QUERY)
        with held_search(monkeypatch, "held-cli-query") as held:
            replies: list[queries.Reply] = []
            thread = threading.Thread(
                target=lambda: replies.append(queries.search_reply(daemon, query)), name="held-cli-query"
            )
            thread.start()
            assert held.entered.wait(30)
            daemon.reopen_root(root.as_uri(), root)  # what a `.kbls.yaml` change asks for
            deadline = time.monotonic() + 60
            while daemon.roots()[0] is old and time.monotonic() < deadline:
                time.sleep(0.05)
            [new] = daemon.roots()
            assert new is not old and old.retired
            assert held.closed == []  # the held query keeps the old engine open
            with pytest.raises(BeingReopenedError, match="being reopened"), old.lease():
                pass
            # Meanwhile a new query is answered by the new engine.
            fresh = queries.search_reply(daemon, query)
            assert isinstance(fresh, queries.SearchReply) and fresh.hits
            held.release.set()
            thread.join(30)
            [reply] = replies
            assert isinstance(reply, queries.SearchReply) and reply.hits  # answered from the old store
            assert len(held.closed) == 1 and held.closed_under_search == []  # closed after, by the lease
    finally:
        daemon.shutdown()
