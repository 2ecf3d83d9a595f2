"""`kbls daemon`: the per-user daemon process (one per user and cache folder).

It takes the pid lock (a second daemon exits at once, status 0; one started while the last is
still stopping waits for it), binds the socket, serves until no client has been connected for
the idle time (`--idle-minutes`, `KBLS_DAEMON_IDLE_MINUTES`, default 10) or SIGTERM/SIGINT,
then removes its socket, stops the index worker and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import math
import os
import signal
import time
from pathlib import Path
from typing import IO

from kbls import __version__
from kbls.logsetup import configure_logging
from kbls.userdaemon.paths import DaemonPaths, daemon_paths
from kbls.userdaemon.spawn import connect

log = logging.getLogger(__name__)

IDLE_ENV = "KBLS_DAEMON_IDLE_MINUTES"
DEFAULT_IDLE_MINUTES = 10.0
#: how long a new daemon waits for one that is stopping (closing its roots) to let go of the pid lock
TAKEOVER_WAIT = 30.0
_TAKEOVER_POLL = 0.1


def idle_minutes(flag: float | None) -> float:
    """The flag, else `KBLS_DAEMON_IDLE_MINUTES`, else 10; a bad value (`nan` too) is the default."""
    if flag is not None and not math.isnan(flag):
        return max(flag, 0.0)
    raw = os.environ.get(IDLE_ENV, "") if flag is None else str(flag)
    try:
        minutes = float(raw) if raw else DEFAULT_IDLE_MINUTES
    except ValueError:
        minutes = math.nan
    if math.isnan(minutes):  # a nan timer fires at once
        log.warning("%s=%r is not a number of minutes; using %s", IDLE_ENV, raw, DEFAULT_IDLE_MINUTES)
        return DEFAULT_IDLE_MINUTES
    return max(minutes, 0.0)


def take_pid_lock(paths: DaemonPaths, wait: float = TAKEOVER_WAIT) -> IO[str] | None:
    """The pid file, locked for this process's life; None when another daemon holds it and serves.

    A daemon that holds the lock but no longer accepts connections is stopping (it removes its
    socket first and lets go of the lock last, after closing its roots): wait up to `wait`
    seconds for it, so the relay that started us gets a daemon instead of waiting in vain.
    """
    handle = open(paths.pid_file, "a+", encoding="ascii")  # noqa: SIM115  # held open until exit
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            serving = connect(paths, timeout=1.0)
            if serving is not None or time.monotonic() >= deadline:
                if serving is not None:
                    serving.close()
                handle.close()
                return None
            time.sleep(_TAKEOVER_POLL)
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def run(idle: float | None = None, log_file: str | None = None, log_level: str = "INFO") -> int:
    """Run the daemon until idle; 0 also when another daemon already serves this user."""
    paths = daemon_paths()
    configure_logging(log_file or str(paths.log_file), log_level, "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)
    lock = take_pid_lock(paths)
    if lock is None:
        log.info("another kbls daemon already serves %s", paths.socket)
        return 0
    # Heavy imports after the lock: a second daemon racing this one exits without paying for them.
    from kbls.daemon.host import SharedDaemon
    from kbls.userdaemon.listener import SocketServer, bind_socket

    idle_seconds = idle_minutes(idle) * 60
    sock = bind_socket(paths.socket)
    inode = paths.socket.stat().st_ino
    log.info("kbls %s daemon (pid %d) on %s, idle exit after %.0f s", __version__, os.getpid(), paths.socket, idle_seconds)
    host = SharedDaemon()
    host.start()
    server = SocketServer(host, sock, idle_seconds)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, server.stop)
        await server.serve()

    try:
        asyncio.run(main())
    finally:
        _remove_socket(paths.socket, inode)
        host.shutdown()
        lock.close()
    log.info("kbls daemon stopped")
    return 0


def _remove_socket(path: Path, inode: int) -> None:
    """Remove our socket file, not one a newer daemon bound at the same path."""
    with contextlib.suppress(OSError):
        if path.stat().st_ino == inode:
            path.unlink()
