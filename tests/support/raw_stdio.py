"""`kbls serve` driven byte by byte over its stdio: for tests of the framing and for benchmarks.

`LspSession` (lsp_client.py) is the client for everything else; this one exists because some
callers need what a real client library cannot give: writing arbitrary bytes (headers in other
spellings, oversize or broken frames), or a round trip with no event loop and no thread hand-off
in it (the daemon benchmark times the server, not the client). Reads are synchronous; a
`deadline` kills the server when it does not answer in time, so a deaf server fails a test
instead of hanging it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any


def frame(message: Any, header: bytes = b"Content-Length: %d\r\n\r\n") -> bytes:
    """`message` as JSON with `header` (its `%d` is the body's length in bytes) in front."""
    body = json.dumps(message).encode()
    return header % len(body) + body


def initialize_params(root: Path | None) -> dict[str, Any]:
    """initialize params for one workspace folder (or none), with no client capabilities."""
    folders = [{"uri": root.as_uri(), "name": root.name}] if root else []
    return {"processId": os.getpid(), "rootUri": root.as_uri() if root else None, "capabilities": {}, "workspaceFolders": folders}


def read_message(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next framed message on `stream` (header names in any case, CRLF or LF); None at its end."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
        elif not line.strip() and length is not None:
            message: dict[str, Any] = json.loads(stream.read(length))
            return message


class ServerGone(AssertionError):
    """The server closed its output (it exited or was killed at a deadline)."""


class RawStdio:
    """One `kbls serve` subprocess; `stderr` and the log file are kept under `tmp`."""

    def __init__(
        self,
        tmp: Path,
        *,
        log_level: str = "WARNING",
        env: Mapping[str, str] | None = None,
        name: str = "raw",
        daemon: bool = False,
    ) -> None:
        self.log_file = tmp / f"{name}.log"
        self.stderr_file = tmp / f"{name}.stderr"
        child = dict(env or os.environ, XDG_CACHE_HOME=str(tmp / "xdg-cache"), PYTHONUNBUFFERED="1")
        # in-process, as LspSession runs it, unless `daemon`: then a relay to the per-user daemon
        # of `env` (its XDG_RUNTIME_DIR) is what answers
        if daemon:
            child.pop("KBLS_NO_DAEMON", None)
        else:
            child["KBLS_NO_DAEMON"] = "1"
        with self.stderr_file.open("wb") as stderr:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kbls", "serve", "--log-file", str(self.log_file), "--log-level", log_level],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=child,
            )
        self._stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]  # PIPE was asked for
        self._stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        self._id = 0

    # -- writing ---------------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        self._stdin.write(data)
        self._stdin.flush()

    def send(self, message: Any) -> None:
        self.write(frame(message))

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def next_id(self) -> int:
        self._id += 1
        return self._id

    # -- reading ---------------------------------------------------------------------------------
    def read(self) -> dict[str, Any]:
        """The next message the server sent."""
        message = read_message(self._stdout)
        if message is None:
            raise ServerGone(f"the server closed its output (exit {self.proc.poll()})\n{self.stderr()}")
        return message

    def answer_any(self, deadline: float | None = 60.0) -> dict[str, Any]:
        """The next response of the server; its own requests are answered with null on the way.

        `deadline=None` waits without a watchdog thread (a benchmark's round trip).
        """
        watchdog = threading.Timer(deadline, self.proc.kill) if deadline is not None else None
        if watchdog:
            watchdog.start()
        try:
            while True:
                message = self.read()
                if "method" not in message:
                    return message
                if "id" in message:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        except ServerGone as gone:
            raise ServerGone(f"no answer within {deadline}s: {gone}") from None
        finally:
            if watchdog:
                watchdog.cancel()

    def answer(self, msg_id: Any, deadline: float | None = 60.0) -> dict[str, Any]:
        """The response to `msg_id` (other responses are dropped)."""
        while True:
            message = self.answer_any(deadline)
            if message.get("id") == msg_id:
                return message

    def request(self, method: str, params: Any, deadline: float | None = 60.0) -> Any:
        """Send a request and return its result (an error response raises)."""
        msg_id = self.next_id()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        message = self.answer(msg_id, deadline)
        if "error" in message:
            raise AssertionError(f"{method}: {message['error']}")
        return message["result"]

    def initialize(self, root: Path | None = None) -> Any:
        result = self.request("initialize", initialize_params(root))
        self.notify("initialized", {})
        return result

    # -- the process -----------------------------------------------------------------------------
    def close_input(self) -> None:
        """End the server's stdin, as a client that goes away does."""
        self._stdin.close()

    def stderr(self) -> str:
        return self.stderr_file.read_text(errors="replace")

    def log(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        """`shutdown` and `exit` when the server still listens; killed when it does not."""
        try:
            if self.proc.poll() is None and not self._stdin.closed:
                self.request("shutdown", None, deadline=10)
                self.notify("exit", None)
            self.proc.wait(30)
        except (AssertionError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(10)
        finally:
            self._stdin.close()
            self._stdout.close()
