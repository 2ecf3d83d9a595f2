"""Fixtures for the per-user daemon's tests: a private runtime folder and cache per test.

The runtime folder is a short path under /tmp (a unix socket path has at most 107 bytes, and
pytest's tmp paths are long); the cache is the one `LspSession` gives its child
(`tmp_path/xdg-cache`), so sessions of one test share one daemon and tests never share one. Any
daemon still running at the end of a test is stopped.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.user_daemon import DaemonEnv, daemon_pids

from kbls.userdaemon.spawn import wait_gone


@pytest.fixture
def daemon_env(tmp_path: Path) -> Iterator[DaemonEnv]:
    runtime = Path(tempfile.mkdtemp(prefix="kbls-rt-", dir="/tmp"))
    os.chmod(runtime, 0o700)
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy") and k != "KBLS_NO_DAEMON"}
    env.update(
        XDG_RUNTIME_DIR=str(runtime), XDG_CACHE_HOME=str(tmp_path / "xdg-cache"), OMP_NUM_THREADS="1",
        KBLS_DAEMON_IDLE_MINUTES="0.5",
    )
    (tmp_path / "xdg-cache").mkdir(exist_ok=True)
    yield DaemonEnv(env=env, folder=runtime / "kbls")
    for pid in daemon_pids(runtime):
        os.kill(pid, signal.SIGTERM)
        if not wait_gone(pid, 10):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(runtime, ignore_errors=True)
