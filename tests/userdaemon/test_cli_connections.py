"""Each CLI query is one connection to the per-user daemon with reading threads of its own: the
SQLite connections those threads opened must close once the threads are gone, or a daemon that
answers the CLI all day keeps one open file per query until the root closes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.support.corpus import make_workspace
from tests.support.lsp_client import LspSession
from tests.support.user_daemon import DaemonEnv

from kbls.userdaemon import client, queries

QUERIES = 200


def _store_files(pid: int, store: Path) -> int:
    """File descriptors of process `pid` open on the store's files (the database, its WAL)."""
    fds = Path(f"/proc/{pid}/fd")
    count = 0
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        count += target.startswith(str(store))
    return count


def test_cli_queries_leave_no_sqlite_connection_open(
    tmp_path: Path, daemon_env: DaemonEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(tmp_path, "notes")
    for name, value in daemon_env.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("KBLS_NO_DAEMON", raising=False)
    with LspSession([root], tmp_path, env=daemon_env.env, daemon=True) as editor:
        editor.wait_ready()
        pid = daemon_env.pid()
        assert pid is not None
        status = client.ask(queries.STATUS, queries.RootQuery(root=str(root)), queries.StatusReply)
        assert status is not None, "the daemon did not answer for its root"
        store = Path(status.status.store)
        for _ in range(5):  # warm: every thread the daemon keeps has read once
            assert client.ask(queries.SEARCH, queries.SearchQuery(root=str(root), query="rust"), queries.SearchReply)
        before = _store_files(pid, store)
        for i in range(QUERIES):
            query = queries.SearchQuery(root=str(root), query=f"ownership {i}", mode="lexical")
            reply = client.ask(queries.SEARCH, query, queries.SearchReply)
            assert reply is not None, i
        after = _store_files(pid, store)
        # a few may still be closing with the last connections' threads; one per query is the leak
        assert after <= before + 4, f"{before} store files open before {QUERIES} CLI queries, {after} after"
