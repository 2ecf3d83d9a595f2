"""Fixtures for the per-user daemon's tests: a private runtime folder and cache per test.

The runtime folder is a short path under /tmp (a unix socket path has at most 107 bytes, and
pytest's tmp paths are long); the cache is the one `LspSession` gives its child
(`tmp_path/xdg-cache`), so sessions of one test share one daemon and tests never share one. Any
daemon still running at the end of a test is stopped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.user_daemon import DaemonEnv, private_daemon_env


@pytest.fixture
def daemon_env(tmp_path: Path) -> Iterator[DaemonEnv]:
    with private_daemon_env(tmp_path, KBLS_DAEMON_IDLE_MINUTES="0.5") as env:
        yield env
