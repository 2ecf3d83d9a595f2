"""Fixtures of the team store tests: one real PostgreSQL 16 + pgvector a session (pgserver),
a fresh database a test, and the fixture notes indexed into both backends.

Where pgserver cannot start PostgreSQL (not installed, no shared memory), every test here is
skipped with the reason printed.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.corpus import FIXTURES
from tests.support.pg import PgUnavailable, new_database, start_server

from kbls.engine import Engine
from kbls.indexing.embed import Embedder


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """The session's server, its cluster in a folder of its own: pytest deletes old base temp
    folders when later sessions start (another run beside this one would delete the cluster), and
    a unix socket's path must stay short."""
    folder = Path(tempfile.mkdtemp(prefix="kbls-pg-"))
    try:
        try:
            server = start_server(folder / "data")
        except PgUnavailable as exc:
            print(f"\nteam store tests skipped: {exc}")
            pytest.skip(str(exc))
        yield server
        server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """The URL of a new, empty database."""
    return new_database(pg_server)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """The fixture notes in a folder with a space and an accent (as users name them)."""
    root = tmp_path / "Team Notés" / "handbook"
    shutil.copytree(FIXTURES, root)
    return root


@pytest.fixture
def open_engine(embedder: Embedder) -> Iterator[Callable[..., Engine]]:
    """Engine(root, store_dir=…) on the shared model; closed after the test."""
    engines: list[Engine] = []

    def factory(root: Path, store: Path | str | None, **kwargs: Any) -> Engine:
        engine = Engine(root, store_dir=store, embedder=embedder, **kwargs)
        engines.append(engine)
        return engine

    yield factory
    for engine in engines:
        engine.close()
