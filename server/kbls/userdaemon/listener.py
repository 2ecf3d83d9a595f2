"""The per-user daemon's unix-socket server: one LSP session per connection, peers of our uid only.

The socket is bound under umask 0177 (so it is 0600 from its first moment, no chmod race) in the
0700 runtime folder (`kbls.userdaemon.paths`). Each connection's peer credentials are read with
`SO_PEERCRED` and a peer of another uid is closed before a byte is read: the folder's mode
already keeps other users out, this is the second lock. Frames are read with `kbls.jsonrpc`
(the same spec-following reader as stdio). When the last client leaves, an idle timer starts;
at its end the server stops (a client arriving meanwhile cancels it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import struct
from pathlib import Path
from typing import Protocol

from kbls.daemon.host import SharedDaemon
from kbls.jsonrpc import SocketStream
from kbls.lsp import pygls_compat, transport
from kbls.lsp.server import make_server

log = logging.getLogger(__name__)

_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
#: seconds a new daemon waits for its first client whatever the idle time (the relay that
#: started it connects as soon as the socket is there)
FIRST_CLIENT_GRACE = 60.0


class SocketLike(Protocol):
    """A socket, or asyncio's `TransportSocket` wrapper of one (what `get_extra_info` returns)."""

    def getsockopt(self, level: int, option: int, buflen: int) -> bytes: ...


def peer_credentials(sock: SocketLike) -> tuple[int, int, int]:
    """(pid, uid, gid) of the process at the other end of a connected unix socket."""
    pid, uid, gid = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
    return pid, uid, gid


def peer_allowed(sock: SocketLike | None) -> bool:
    """Only a process of this daemon's own uid may talk to it."""
    if sock is None:
        return False
    try:
        _, uid, _ = peer_credentials(sock)
    except OSError as exc:
        log.warning("refused a connection whose peer cannot be identified: %s", exc)
        return False
    if uid != os.getuid():
        log.warning("refused a connection from uid %d (this daemon serves uid %d only)", uid, os.getuid())
        return False
    return True


def bind_socket(path: Path) -> socket.socket:
    """A listening unix socket at `path`, mode 0600 from the start; a stale file there is replaced."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    sock.listen(64)
    return sock


class SocketServer:
    """Serves LSP connections on a bound socket until idle for `idle_seconds` or `stop()`."""

    def __init__(self, host: SharedDaemon, sock: socket.socket, idle_seconds: float) -> None:
        self.host = host
        self.sock = sock
        self.idle_seconds = idle_seconds
        self.clients = 0
        self._stopped: asyncio.Event | None = None
        self._idle: asyncio.TimerHandle | None = None

    async def serve(self) -> None:
        self._stopped = asyncio.Event()
        server = await asyncio.start_unix_server(self._connection, sock=self.sock)
        # Whoever started the daemon connects within moments: an idle time shorter than that
        # (even 0, "exit with the last client") must not end the daemon before its first client.
        self._arm_idle(max(self.idle_seconds, FIRST_CLIENT_GRACE))
        try:
            await self._stopped.wait()
        finally:
            server.close()

    def stop(self) -> None:
        if self._stopped is not None:
            self._stopped.set()

    def _arm_idle(self, seconds: float | None = None) -> None:
        if self._idle is not None:
            self._idle.cancel()
        delay = self.idle_seconds if seconds is None else seconds
        self._idle = asyncio.get_running_loop().call_later(delay, self._idle_out)

    def _idle_out(self) -> None:
        if self.clients == 0:
            log.info("no client for the idle time (%.0f s): stopping", self.idle_seconds)
            self.stop()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if not peer_allowed(sock):
            writer.close()
            return
        self.clients += 1
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        conn = make_server(self.host)
        stop = pygls_compat.install_stop_event(conn)
        conn.protocol.set_writer(writer)
        log.info("a client connected (%d now)", self.clients)
        try:
            await transport.read_loop(conn, SocketStream(reader), stop)
        except (ConnectionError, OSError) as exc:
            log.info("a client's connection failed: %s", exc)
        finally:
            # Releasing the client's roots may close engines: not on the event loop.
            await asyncio.get_running_loop().run_in_executor(None, conn.shutdown)
            writer.close()
            self.clients -= 1
            log.info("a client left (%d now)", self.clients)
            if self.clients == 0:
                self._arm_idle()
