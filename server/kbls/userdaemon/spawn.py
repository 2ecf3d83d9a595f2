"""Reaching the per-user daemon: connect, and start it when absent (one start under a lock).

Five editors opening at once all find no socket; each takes the spawn lock (`flock`) in turn.
The first starts `kbls daemon` and waits until it accepts connections; the others, once they
get the lock, connect to it. The daemon is started through a short-lived intermediate process
in a new session, so it is nobody's child (no zombie in an editor's process tree) and lives on
when the editor that started it closes. The daemon's own pid lock makes a second daemon exit
even if two were started by other means.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import socket
import subprocess
import sys
import time

from kbls.userdaemon.paths import DaemonPaths

log = logging.getLogger(__name__)

#: how long a relay waits for a daemon it (or a racing relay) started: imports and the first
#: bind take 1-3 s on an idle machine, much longer on a loaded one
START_TIMEOUT = 60.0
#: seconds after the start after which a pid lock nobody holds means the daemon died starting
#: (it takes the lock within a second or two of starting, before its heavy imports)
LOCK_GRACE = 15.0
_POLL = 0.05
#: the intermediate process: starts the daemon in a session of its own and exits at once
_DETACH = "import subprocess, sys; subprocess.Popen(sys.argv[1:], start_new_session=True, close_fds=True)"


def connect(paths: DaemonPaths, timeout: float = 2.0) -> socket.socket | None:
    """A connected socket to the daemon, or None when none is listening."""
    if not paths.socket.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(paths.socket))
    except OSError:
        sock.close()
        return None
    sock.settimeout(None)
    return sock


def start_daemon(paths: DaemonPaths, extra_args: list[str] | None = None) -> None:
    """Start `kbls daemon` detached; its stderr goes to the daemon's log file."""
    argv = [sys.executable, "-m", "kbls", "daemon", *(extra_args or [])]
    with open(paths.log_file, "ab") as log_out:
        subprocess.run(
            [sys.executable, "-c", _DETACH, *argv], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=log_out, cwd="/", check=False, timeout=30,
        )
    log.info("started a kbls daemon for %s", paths.socket)


def ensure_daemon(paths: DaemonPaths, timeout: float = START_TIMEOUT) -> socket.socket | None:
    """Connect to the daemon, starting it first if nobody else is; None if it cannot be reached."""
    sock = connect(paths)
    if sock is not None:
        return sock
    deadline = time.monotonic() + timeout
    with open(paths.spawn_lock, "a") as lock:
        if not _lock(lock.fileno(), deadline):
            log.warning("timed out waiting for another kbls to start the daemon")
            return connect(paths)
        try:
            sock = connect(paths)  # a racing relay started it while we waited for the lock
            if sock is not None:
                return sock
            try:
                start_daemon(paths)
            except (OSError, subprocess.SubprocessError) as exc:
                log.warning("cannot start the kbls daemon: %s", exc)
                return None
            started = time.monotonic()
            while time.monotonic() < deadline:
                sock = connect(paths)
                if sock is not None:
                    return sock
                if time.monotonic() - started > LOCK_GRACE and not _daemon_alive(paths):
                    log.warning("the kbls daemon stopped as it started (see %s)", paths.log_file)
                    return None
                time.sleep(_POLL)
            log.warning("the kbls daemon did not answer within %.0f s (see %s)", timeout, paths.log_file)
            return None
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _daemon_alive(paths: DaemonPaths) -> bool:
    """Some daemon holds the pid lock (a daemon takes it first thing and keeps it for life)."""
    try:
        with open(paths.pid_file, "a") as probe:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released when closed
    except BlockingIOError:
        return True
    except OSError:
        return True  # cannot tell: keep waiting for the socket
    return False


def _lock(fd: int, deadline: float) -> bool:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL)


def wait_gone(pid: int, timeout: float) -> bool:
    """Wait until process `pid` no longer exists (a signal 0 fails)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        time.sleep(_POLL)
    return False
