"""The per-user daemons of a test: its environment, its processes, its log."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


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
