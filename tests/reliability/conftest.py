"""Fixtures of the reliability tests (issue 6): private caches and one shared real model.

Sizes are small in `make test`; `KBLS_LONG=1` runs the issue's full sizes (see helpers.sized).
"""

from __future__ import annotations

import pytest

from kbls.indexing.embed import Embedder


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may write the user's cache: the default store dir lands in a temp folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real bundled model, loaded once for the session."""
    model = Embedder()
    model.load()
    return model
