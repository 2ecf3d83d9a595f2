"""Where the per-user daemon listens: a private runtime folder (0700) and a socket (0600) in it.

The folder is `$XDG_RUNTIME_DIR/kbls` (a per-user tmpfs on systemd systems; a relative value is
ignored, as the XDG spec asks), else `<tmp>/kbls-<uid>`. A folder that exists already must be
ours, not a symlink, and closed to group and others; anything else is refused, because a folder
another user made could hold a socket of theirs that we would then talk to. The socket's name
carries a hash of the user's cache folder (where stores and the model cache live) and of the
kbls version, so two environments with different caches (tests, sandboxes) never share a
daemon, an upgraded kbls never talks to the old daemon, and every editor of one user shares one.
"""

from __future__ import annotations

import hashlib
import os
import socket
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kbls import __version__
from kbls.config import user_cache_dir
from kbls.errors import KblsError

#: the kernel's limit for a unix socket path (sun_path is 108 bytes with its NUL)
MAX_SOCKET_PATH = 107
NO_DAEMON_ENV = "KBLS_NO_DAEMON"


class RuntimeDirError(KblsError):
    """The runtime folder is unsafe or unusable: the daemon is not used (editors serve in-process)."""


@dataclass(frozen=True)
class DaemonPaths:
    folder: Path
    socket: Path
    #: held (flock) by whoever is starting a daemon: five racing editors start one.
    spawn_lock: Path
    #: held (flock) by the living daemon for its whole life: a second daemon exits at once.
    pid_file: Path
    log_file: Path


def daemon_disabled() -> bool:
    """`KBLS_NO_DAEMON=1` (or any value but empty/0), or a platform without the peer check:
    editors and the CLI never use a daemon."""
    return os.environ.get(NO_DAEMON_ENV, "") not in ("", "0") or not daemon_supported()


def daemon_supported() -> bool:
    """Unix sockets with `SO_PEERCRED` (Linux). Windows (named pipes) and macOS
    (`LOCAL_PEERCRED`) are planned in docs/userdaemon.md; there `kbls serve` serves in-process."""
    return hasattr(os, "getuid") and hasattr(socket, "AF_UNIX") and hasattr(socket, "SO_PEERCRED")


def runtime_folder() -> Path:
    """The private folder, created 0700 when missing. :raises RuntimeDirError: when unsafe."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    # A relative value is invalid (XDG spec): it would name another folder in the daemon, which
    # runs in `/`, than in the editor's relay.
    base = Path(xdg) if xdg and os.path.isabs(xdg) and Path(xdg).is_dir() else None
    folder = base / "kbls" if base is not None else Path(tempfile.gettempdir()) / f"kbls-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError as exc:
        raise RuntimeDirError(f"cannot create {folder}: {exc.strerror or exc}") from None
    check_private_folder(folder, info)
    return folder


def check_private_folder(folder: Path, info: os.stat_result) -> None:
    """:raises RuntimeDirError: unless `folder` is a real folder of ours that only we can enter."""
    if not stat.S_ISDIR(info.st_mode):
        raise RuntimeDirError(f"{folder} is not a folder (a symlink or file is refused)")
    if info.st_uid != os.getuid():
        raise RuntimeDirError(f"{folder} belongs to uid {info.st_uid}, not to this user")
    if info.st_mode & 0o077:
        raise RuntimeDirError(f"{folder} is open to other users (mode {stat.S_IMODE(info.st_mode):o}); expected 700")


def socket_name() -> str:
    """`daemon-<hash of the cache folder and the kbls version>`: after an upgrade, editors start a
    daemon of the new version and the old one exits when its last client has gone."""
    key = f"{user_cache_dir().resolve()}\0{__version__}"
    return f"daemon-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def daemon_paths(folder: Path | None = None) -> DaemonPaths:
    """The socket, locks and log of this user's daemon. :raises RuntimeDirError: when unusable."""
    folder = folder if folder is not None else runtime_folder()
    name = socket_name()
    socket = folder / f"{name}.sock"
    if len(os.fsencode(socket)) > MAX_SOCKET_PATH:
        raise RuntimeDirError(f"the socket path {socket} is longer than the {MAX_SOCKET_PATH} bytes a unix socket allows")
    return DaemonPaths(
        folder=folder, socket=socket, spawn_lock=folder / f"{name}.spawn.lock",
        pid_file=folder / f"{name}.pid", log_file=folder / f"{name}.log",
    )
