"""`kbls serve` through the per-user daemon: reach it (starting it when absent) and relay.

Returns None when the daemon is not to be used (`KBLS_NO_DAEMON`, an unsafe runtime folder) or
cannot be reached: the caller then serves in-process, as `kbls serve --standalone` does. The
decision is made before a byte of stdin is read, so the in-process server sees the whole session.
"""

from __future__ import annotations

import logging

from kbls.logsetup import configure_logging
from kbls.userdaemon.paths import RuntimeDirError, daemon_disabled, daemon_paths

log = logging.getLogger(__name__)


def serve_through_daemon(log_file: str | None, log_level: str) -> int | None:
    """Relay stdio to the daemon until the editor leaves; None: serve in-process instead."""
    if daemon_disabled():
        return None
    configure_logging(log_file, log_level, "%(asctime)s %(levelname)s %(name)s (relay): %(message)s")
    try:
        paths = daemon_paths()
    except RuntimeDirError as exc:
        log.warning("not using the per-user daemon: %s", exc)
        return None
    from kbls.userdaemon.spawn import ensure_daemon

    sock = ensure_daemon(paths)
    if sock is None:
        log.warning("the per-user daemon cannot be reached; serving in-process")
        return None
    from kbls.userdaemon.relay import relay

    log.info("relaying to the kbls daemon at %s", paths.socket)
    return relay(paths, sock)
