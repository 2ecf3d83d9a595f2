"""The per-user daemons of a test: its environment, its processes, its log."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kbls.userdaemon.spawn import wait_gone


@dataclass
class DaemonEnv:
    env: dict[str, str]
    #: $XDG_RUNTIME_DIR/kbls: socket, pid file, log
    folder: Path

    def pid(self) -> int | None:
        for pid_file in self.folder.glob("daemon-*.pid"):
            text = pid_file.read_text().strip()
            if text.isdigit() and _alive(int(text)):
                return int(text)
        return None

    def log(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.folder.glob("daemon-*.log")))

    def sockets(self) -> list[Path]:
        return sorted(self.folder.glob("daemon-*.sock"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not alive
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def daemon_pids(runtime: Path) -> list[int]:
    """Processes running `kbls daemon` whose XDG_RUNTIME_DIR is `runtime`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        ours = f"XDG_RUNTIME_DIR={runtime}".encode() in environ
        if b"kbls" in argv and b"daemon" in argv and ours and _alive(int(entry.name)):
            found.append(int(entry.name))
    return found


@contextlib.contextmanager
def private_daemon_env(tmp_path: Path, **extra: str) -> Iterator[DaemonEnv]:
    """A private runtime folder (a short path under /tmp: a unix socket path has at most 107
    bytes) and the cache `LspSession` gives its child (`tmp_path/xdg-cache`), so the sessions of
    one test share one daemon and tests never share one; a daemon still running at the end is
    stopped."""
    runtime = Path(tempfile.mkdtemp(prefix="kbls-rt-", dir="/tmp"))
    os.chmod(runtime, 0o700)
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy") and k != "KBLS_NO_DAEMON"}
    env.update(XDG_RUNTIME_DIR=str(runtime), XDG_CACHE_HOME=str(tmp_path / "xdg-cache"), OMP_NUM_THREADS="1", **extra)
    (tmp_path / "xdg-cache").mkdir(exist_ok=True)
    try:
        yield DaemonEnv(env=env, folder=runtime / "kbls")
    finally:
        for pid in daemon_pids(runtime):
            os.kill(pid, signal.SIGTERM)
            if not wait_gone(pid, 10):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(runtime, ignore_errors=True)
