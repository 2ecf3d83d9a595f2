"""A small synchronous driver of one `kbls serve` subprocess (pygls LanguageClient over stdio).

The client's event loop runs on its own thread, so tests and the load benchmark call plain
functions: `daemon.request("kb/search", {...})` returns plain dicts or raises the JSON-RPC error;
`daemon.submit(...)` returns a concurrent future, so several requests can be in flight.
Every message the server sends (`window/showMessage`, `kb/indexStatus`, ...) is kept.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from kbls.lsp import wire as protocol

REQUEST_TIMEOUT = 60.0


class Daemon:
    """One running `kbls serve` for `folders`, with a private cache dir under `tmp`."""

    def __init__(
        self,
        folders: list[Path],
        tmp: Path,
        *,
        name: str = "kbls",
        init_options: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        command: list[str] | None = None,
    ) -> None:
        self.log_file = tmp / f"{name}-{time.monotonic_ns()}.log"
        self.messages: list[tuple[str, Any]] = []
        self._lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.client = LanguageClient("kbls-reliability", "0")
        for method in (types.WINDOW_SHOW_MESSAGE, types.WINDOW_LOG_MESSAGE, "kb/indexStatus"):
            self.client.feature(method)(self._keeper(method))
        cache = tmp / "xdg-cache"
        cache.mkdir(exist_ok=True)
        child = dict(env or os.environ, XDG_CACHE_HOME=str(cache), PYTHONUNBUFFERED="1")
        argv = command or [sys.executable, "-m", "kbls", "serve"]
        self._run(self.client.start_io(*argv, "--log-file", str(self.log_file), env=child))
        self.initialize_result = self._run(
            self.client.initialize_async(
                types.InitializeParams(
                    process_id=os.getpid(),
                    capabilities=types.ClientCapabilities(),
                    root_uri=folders[0].as_uri() if folders else None,
                    workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
                    initialization_options=init_options,
                )
            )
        )
        self.client.initialized(types.InitializedParams())

    def _keeper(self, method: str) -> Callable[[Any], None]:
        def keep(params: Any) -> None:
            value = getattr(params, "message", None) if method.startswith("window/") else protocol._plain(params)
            with self._lock:
                self.messages.append((method, value))

        return keep

    # -- requests ------------------------------------------------------------------------------
    def _run(self, coro: Any, timeout: float = REQUEST_TIMEOUT) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def submit(self, method: str, params: Any = None) -> concurrent.futures.Future:
        """Send a request; the future resolves to the plain result or raises its error."""

        async def send() -> Any:
            return protocol._plain(await self.client.protocol.send_request_async(method, params))

        return asyncio.run_coroutine_threadsafe(send(), self.loop)

    def request(self, method: str, params: Any = None, timeout: float = REQUEST_TIMEOUT) -> Any:
        return self.submit(method, params).result(timeout)

    def search(self, query: str, **extra: Any) -> dict[str, Any]:
        return self.request("kb/search", {"query": query, **extra})

    def status(self) -> dict[str, Any]:
        return self.request("kb/status", {})

    def shown(self) -> list[str]:
        """`window/showMessage` texts received so far."""
        with self._lock:
            return [m for k, m in self.messages if k == types.WINDOW_SHOW_MESSAGE]

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 120.0, what: str = "") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}\n{self.log_tail()}")

    def wait_ready(self, timeout: float = 120.0) -> dict[str, Any]:
        def ready() -> dict[str, Any] | None:
            status = self.status()
            return status if status["state"] == "ready" and status["queue"] == 0 and status["roots"] else None

        return self.wait_for(ready, timeout, "the index to be ready")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    @property
    def process(self) -> Any:
        return self.client._server

    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def close(self) -> None:
        try:
            self._run(self.client.shutdown_async(None), timeout=10)
            self.client.exit(None)
            self._run(asyncio.wait_for(self.client.stop(), 10), timeout=15)
        except Exception:
            if self.alive():
                self.process.kill()
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=5)
