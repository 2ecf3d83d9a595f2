"""Fixtures every suite shares: each test isolated from the user's cache and daemon, one real model.

Helpers these build on live in `tests/support/`; each suite's own conftest adds its fixtures.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.files import mounted_tmpfs
from tests.support.model import load_embedder
from tests.support.shared_sets import SharedSets

from kbls.indexing.embed import Embedder


@pytest.fixture(autouse=True, scope="session")
def _one_prepared_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The load-ready copy of the model (kbls.indexing.model_cache, 90 MB) is built once a session,
    outside the user's cache; set before the session's `embedder` loads, inherited by children."""
    with pytest.MonkeyPatch.context() as session_env:
        session_env.setenv("KBLS_MODEL_CACHE", str(tmp_path_factory.mktemp("prepared-model")))
        yield


@pytest.fixture(autouse=True)
def _isolated_from_the_user(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may write the user's cache (the default store dir lands in a temp folder) or start
    or reach a per-user daemon: `kbls` runs in-process unless a test builds a daemon's environment
    (tests/userdaemon)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    monkeypatch.setenv("KBLS_NO_DAEMON", "1")


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real bundled model, loaded once for the whole session."""
    return load_embedder()


@pytest.fixture(scope="session")
def shared_sets(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> SharedSets:
    """The shared eval sets, each indexed once a session (tests/quality and tests/postgres)."""
    return SharedSets(tmp_path_factory.mktemp("shared-sets"), embedder)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A small tmpfs under `tmp_path` (tests/support/files.py: `remount` makes it read-only)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    with mounted_tmpfs(mount):
        yield mount
