"""An editor over the team store: the real `kbls serve` (LSP over stdio), in-process and through
the per-user daemon, pointed at a PostgreSQL store by the user's own settings. It answers
`kb/search` and `kb/related` from the team store, a save writes and embeds nothing there (the
status says why), and a connection dropped mid-session is opened again or named in the error."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from tests.support.lsp_client import LspSession
from tests.support.user_daemon import DaemonEnv, private_daemon_env

from kbls.engine import Engine
from kbls.storage.postgres.location import store_host

#: LSP's RequestFailed: the request was valid, the server could not answer it now
REQUEST_FAILED = -32803
#: what a reader's save must leave as it was: every row of the note tables, and the root's revision
SNAPSHOT = (
    "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM chunks), (SELECT count(*) FROM embeddings), "
    "(SELECT count(*) FROM chunk_terms), (SELECT string_agg(path || ':' || hash, ',' ORDER BY path) FROM files), "
    "(SELECT string_agg(revision::text, ',') FROM roots)"
)


def _snapshot(url: str) -> tuple[Any, ...]:
    with psycopg.connect(url) as conn:
        row = conn.execute(SNAPSHOT).fetchone()
    assert row is not None
    return tuple(row)


def _admin(url: str) -> tuple[str, str]:
    """The server's admin URL and the database's name."""
    name = url.split("?")[0].rsplit("/", 1)[1]
    return url.replace(f"/{name}?", "/postgres?", 1), name


@pytest.fixture
def team_url(vault: Path, pg_url: str, open_engine: Callable[..., Engine]) -> str:
    """The fixture notes indexed into a fresh team store by the ingest worker."""
    report = open_engine(vault, pg_url, ingest=True).index()
    assert report.files == 7
    return pg_url


def _exercise(session: LspSession, vault: Path, url: str) -> None:
    status = session.wait_ready()
    (root,) = status.roots
    assert root.store.startswith(url.split("?")[0]) and "root handbook" in root.store
    assert root.sqlite.module == "postgresql" and (root.files, root.chunks) != (0, 0)
    assert root.error is None and status.state == "ready"
    logged = [m for k, m in session.notifications if k == "window/logMessage"]
    assert any("is read from the team store" in m and "saves here are not indexed" in m for m in logged)
    assert session.paths_found("who owns a value after it is moved", mode="hybrid")[0] == "rust/ownership.md"
    assert "cooking/sourdough.md" in session.paths_found("sourdough starter", mode="lexical")
    related = session.request("kb/related", {"uri": (vault / "rust" / "ownership.md").as_uri()})
    assert "rust/borrowing.md" in {h["path"] for h in related["hits"]}

    # A save is the worker's to index: nothing is embedded or written, searches answer as before.
    before = _snapshot(url)
    pasta = vault / "cooking" / "pasta.md"
    pasta.write_text("# Fresh pasta\n\nSemolina gnocchi with sage butter.\n", encoding="utf-8")
    session.save(pasta)
    time.sleep(2)  # a save is queued and debounced: give a wrong write the time to happen
    session.wait_ready()
    assert _snapshot(url) == before
    assert "cooking/pasta.md" not in session.paths_found("semolina gnocchi", mode="lexical")
    after = session.status()
    assert after.embedded_since_start == 0 and after.roots[0].error is None
    assert session.alive()

    # The server drops every connection: the next search opens one again.
    admin, name = _admin(url)
    expected = session.paths_found("sourdough starter", mode="hybrid")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
    assert session.paths_found("sourdough starter", mode="hybrid") == expected
    # While it cannot be reached, a search is a JSON-RPC error naming the store; then it answers again.
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        try:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
            with pytest.raises(Exception, match="to the store postgresql://") as raised:
                session.search("sourdough starter", mode="hybrid")
            assert "(root handbook)" in str(raised.value) and "not currently accepting connections" in str(raised.value)
            assert getattr(raised.value, "code", None) == REQUEST_FAILED  # retry later, not a server bug
            assert session.alive()
        finally:
            conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
    assert session.paths_found("sourdough starter", mode="hybrid") == expected
    assert _snapshot(url) == before


def test_kbls_serve_reads_the_team_store(vault: Path, team_url: str, tmp_path: Path) -> None:
    """The store in the editor's own settings (initializationOptions): trusted as the user's."""
    with LspSession([vault], tmp_path, init_options={"store": team_url}, log_level="INFO") as session:
        _exercise(session, vault, team_url)


@pytest.fixture
def daemon_env(tmp_path: Path) -> Iterator[DaemonEnv]:
    """A private per-user daemon, as tests/userdaemon's."""
    with private_daemon_env(tmp_path) as env:
        yield env


def test_kbls_serve_through_the_daemon_reads_the_team_store(
    vault: Path, team_url: str, tmp_path: Path, daemon_env: DaemonEnv
) -> None:
    """The store in the workspace's `.kbls.yaml`, its host trusted in the environment the editor
    starts `kbls serve` from (which the daemon it spawns inherits, and reads the config in)."""
    (vault / ".kbls.yaml").write_text(f"store: {team_url}\n", encoding="utf-8")
    env = dict(daemon_env.env, KBLS_TRUSTED_STORES=store_host(team_url))
    with LspSession([vault], tmp_path, env=env, daemon=True, log_level="INFO") as session:
        _exercise(session, vault, team_url)
        assert daemon_env.pid() is not None  # served by the daemon, not in-process
        assert "is read from the team store" in daemon_env.log()
