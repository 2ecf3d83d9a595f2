"""`kbls` run as a child process: a private cache, no proxies, one thread for the math libraries."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

KBLS = Path(sys.executable).parent / "kbls"
#: runs `kbls` with the embedder wrapped so each embedded chunk hash is logged (see its docstring)
COUNTING_CLI = Path(__file__).resolve().parent / "counting_cli.py"


def child_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The environment of a child `kbls`: private cache, no proxies, few threads, and no per-user
    daemon (`kbls serve` serves in-process, so killing it kills the indexer; pass
    `KBLS_NO_DAEMON=""` in `extra` for a test of the daemon)."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    cache = tmp / "xdg-cache"
    cache.mkdir(parents=True, exist_ok=True)
    env.update(XDG_CACHE_HOME=str(cache), PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1", KBLS_NO_DAEMON="1")
    env.update(extra)
    return env


def run_kbls(
    args: list[str], tmp: Path, *, timeout: float = 300, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(KBLS), *args], capture_output=True, text=True, timeout=timeout, env=env or child_env(tmp)
    )


def assert_no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    for stream in (proc.stdout, proc.stderr):
        assert "Traceback" not in stream, stream


def read_embed_log(path: Path) -> list[str]:
    """Chunk hashes `COUNTING_CLI` logged, one per line (a torn last line is dropped)."""
    if not path.exists():
        return []
    lines = path.read_text().split("\n")
    return [line for line in lines[:-1] if len(line) == 32]
