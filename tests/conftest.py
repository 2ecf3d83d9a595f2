"""Fixtures every suite shares: a private cache for each test and one real model per session.

Helpers these build on live in `tests/support/`; each suite's own conftest adds its fixtures.
"""

from __future__ import annotations

import pytest
from tests.support.model import load_embedder

from kbls.indexing.embed import Embedder


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may write the user's cache: the default store dir lands in a temp folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real bundled model, loaded once for the whole session."""
    return load_embedder()
