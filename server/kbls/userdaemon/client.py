"""A small blocking client of the per-user daemon, for the command line.

`ask(method, query, reply_type)` connects only when a daemon is already listening (the CLI never
starts one), speaks just enough LSP (initialize, one request, shutdown, exit) and returns the
typed reply, or None when there is no daemon, it does not have the root open, or anything goes
wrong on the way (the CLI then does the work itself, as without a daemon). A `Failure` reply
(a bad query, a path outside the root) is raised again as the CLI's own error.
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import threading
import time
from typing import Any, TypeVar

import msgspec

from kbls import jsonrpc
from kbls.userdaemon import queries
from kbls.userdaemon.paths import RuntimeDirError, daemon_disabled, daemon_paths
from kbls.userdaemon.spawn import connect

log = logging.getLogger(__name__)
R = TypeVar("R")

#: seconds to wait for any one answer; a daemon slower than this is skipped (the CLI works alone)
ANSWER_TIMEOUT = 30.0
#: seconds without a call after which `DaemonLink` closes its session (and so lets an idle daemon exit)
LINK_IDLE = 15.0


class DaemonUnavailable(Exception):
    """The daemon's connection failed or it answered with a JSON-RPC error."""


class DaemonClient:
    """One LSP session with the daemon over its socket."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._sock.settimeout(ANSWER_TIMEOUT)
        self._file = sock.makefile("rb")
        self._frames = jsonrpc.FrameReader(jsonrpc.FileStream(self._file))
        self._ids = itertools.count(1)

    @classmethod
    def running(cls) -> DaemonClient | None:
        """A session with the daemon if one is listening (never starts one)."""
        if daemon_disabled():
            return None
        try:
            sock = connect(daemon_paths())
        except RuntimeDirError as exc:
            log.debug("no daemon: %s", exc)
            return None
        if sock is None:
            return None
        client = cls(sock)
        try:
            client.request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}})
            client.notify("initialized", {})
        except (OSError, DaemonUnavailable) as exc:
            log.debug("the daemon did not initialize: %s", exc)
            client.close(polite=False)
            return None
        return client

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        msg_id = next(self._ids)
        self._write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            message = self._read()
            if message.get("id") != msg_id or "method" in message:
                continue  # notifications (index state, messages) are not for the CLI
            if "error" in message:
                raise DaemonUnavailable(str(message["error"].get("message", message["error"])))
            return message.get("result")

    def close(self, polite: bool = True) -> None:
        try:
            if polite:
                self.request("shutdown", None)
                self.notify("exit", None)
        except (OSError, DaemonUnavailable):
            pass
        finally:
            self._file.close()
            self._sock.close()

    def _write(self, message: dict[str, Any]) -> None:
        self._sock.sendall(jsonrpc.encode(message))

    def _read(self) -> dict[str, Any]:
        body = jsonrpc.read_blocking(self._frames)
        if body is None:
            raise DaemonUnavailable("the daemon closed the connection")
        if isinstance(body, jsonrpc.Malformed):
            raise DaemonUnavailable(f"the daemon sent a frame that cannot be read: {body.reason}")
        value = jsonrpc.json_object(body)
        if value is None:
            raise DaemonUnavailable("the daemon sent a frame that is not a JSON object")
        return value


def ask(method: str, query: queries.RootQuery, reply_type: type[R]) -> R | None:
    """The daemon's reply to one CLI query, or None (see the module docstring).

    :raises KblsError: the daemon's `Failure`, raised again as the CLI's own error class.
    """
    client = DaemonClient.running()
    if client is None:
        return None
    try:
        result = client.request(method, msgspec.to_builtins(query))
    except (OSError, DaemonUnavailable, ValueError) as exc:
        log.debug("the daemon could not answer %s: %s", method, exc)
        client.close(polite=False)
        return None
    client.close()
    return _typed(method, result, reply_type)


def _typed(method: str, result: Any, reply_type: type[R]) -> R | None:
    if result is None:
        return None
    if isinstance(result, dict) and set(result) == {"kind", "message"}:
        queries.raise_failure(msgspec.convert(result, queries.Failure))
    try:
        return msgspec.convert(result, reply_type)
    except msgspec.ValidationError as exc:  # a daemon of another version
        log.debug("the daemon's answer to %s does not fit: %s", method, exc)
        return None


class DaemonLink:
    """A long-lived session with the daemon for a long-lived client (`kbls mcp`), thread-safe.

    Connects on first use and again after a failure (at most every `retry_seconds`); every call
    answers None when no daemon is there, so the caller serves itself. After `idle_seconds`
    without a call it closes the session: a connected client keeps the daemon alive, and an
    agent host keeps `kbls mcp` running for hours after the last editor (and its roots) left.
    """

    def __init__(self, retry_seconds: float = 5.0, idle_seconds: float = LINK_IDLE) -> None:
        self.retry_seconds = retry_seconds
        self.idle_seconds = idle_seconds
        # Guards _client, _next_try, _last_use and _idle (the MCP tools run in worker threads,
        # the idle check in a timer thread).
        self._lock = threading.Lock()
        self._client: DaemonClient | None = None
        self._next_try = 0.0
        self._last_use = 0.0
        self._idle: threading.Timer | None = None

    def ask(self, method: str, query: queries.RootQuery, reply_type: type[R]) -> R | None:
        """As `ask`, on this link's session. :raises KblsError: the daemon's `Failure`."""
        with self._lock:
            if self._client is None and time.monotonic() >= self._next_try:
                self._client = DaemonClient.running()
                if self._client is None:
                    self._next_try = time.monotonic() + self.retry_seconds
            if self._client is None:
                return None
            try:
                result = self._client.request(method, msgspec.to_builtins(query))
            except (OSError, DaemonUnavailable, ValueError) as exc:
                log.info("the daemon link failed (%s); serving in-process", exc)
                self._client.close(polite=False)
                self._client = None
                self._next_try = time.monotonic() + self.retry_seconds
                return None
            self._last_use = time.monotonic()
            if self._idle is None:
                self._arm_idle(self.idle_seconds)
        return _typed(method, result, reply_type)

    def _arm_idle(self, delay: float) -> None:
        """Check for idleness in `delay` seconds (the lock is held)."""
        self._idle = threading.Timer(delay, self._idle_check)
        self._idle.daemon = True
        self._idle.start()

    def _idle_check(self) -> None:
        with self._lock:
            self._idle = None
            if self._client is None:
                return
            left = self._last_use + self.idle_seconds - time.monotonic()
            if left > 0:
                self._arm_idle(left)
                return
            log.info("no call for %.0f s: closing the session with the daemon", self.idle_seconds)
            self._client.close()
            self._client = None  # the next call connects again

    def close(self) -> None:
        with self._lock:
            if self._idle is not None:
                self._idle.cancel()
                self._idle = None
            if self._client is not None:
                self._client.close()
                self._client = None
