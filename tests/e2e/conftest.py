"""Fixtures of the end-to-end tests: a copied notes workspace and a running `kbls serve`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.corpus import make_workspace
from tests.support.lsp_client import LspSession


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


@pytest.fixture
def session(workspace: Path, tmp_path: Path) -> Iterator[LspSession]:
    with LspSession([workspace], tmp_path) as s:
        yield s


@pytest.fixture
def ready(session: LspSession) -> LspSession:
    session.wait_ready()
    return session


@pytest.fixture(scope="module")
def module_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("shared"))


@pytest.fixture(scope="module")
def shared_session(module_workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    """One daemon for a module's read-only tests (starting one costs seconds on two cores)."""
    with LspSession([module_workspace], tmp_path_factory.mktemp("shared-logs")) as s:
        yield s


@pytest.fixture
def shared(shared_session: LspSession) -> LspSession:
    shared_session.wait_ready()
    return shared_session
