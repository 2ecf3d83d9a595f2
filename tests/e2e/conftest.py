"""End-to-end harness: the real `kbls serve` subprocess driven by pygls's LanguageClient over stdio.

`Session` runs the client's event loop on a thread of its own, so tests are plain synchronous
functions: `session.request("kb/search", {...})` returns the result as plain dicts, and
`session.wait_for(predicate)` polls what the server sent (notifications, progress) with a bound.
Each test gets a copy of `tests/fixtures/notes` with `.kbls.yaml` pointing the store inside the
copy, and XDG_CACHE_HOME in the temp dir, so nothing is written to the real home cache.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import msgspec
import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from kbls import protocol

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "notes"
REQUEST_TIMEOUT = 30.0
INDEX_TIMEOUT = 90.0


def plain(value: Any) -> Any:
    """pygls hands custom results over as namedtuples: make them dicts again."""
    return protocol._plain(value)


class Session:
    """One running `kbls serve` and the client talking to it."""

    def __init__(
        self,
        folders: list[Path],
        tmp: Path,
        *,
        init_options: dict[str, Any] | None = None,
        name: str = "kbls",
        progress: bool = True,
    ) -> None:
        self.folders = folders
        self.log_file = tmp / f"{name}-{time.monotonic_ns()}.log"
        self.notifications: list[tuple[str, Any]] = []
        self.progress: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.client = LanguageClient("kbls-e2e", "0")
        self._register()
        env = dict(os.environ, XDG_CACHE_HOME=str(tmp / "cache"), PYTHONUNBUFFERED="1")
        self._run(
            self.client.start_io(
                sys.executable, "-m", "kbls", "serve", "--log-file", str(self.log_file), "--log-level", "DEBUG",
                env=env,
            )
        )
        capabilities = types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=progress),
            workspace=types.WorkspaceClientCapabilities(workspace_folders=True),
        )
        self.initialize_result = self._run(
            self.client.initialize_async(
                types.InitializeParams(
                    process_id=os.getpid(),
                    capabilities=capabilities,
                    root_uri=folders[0].as_uri() if folders else None,
                    workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
                    initialization_options=init_options,
                )
            )
        )
        self.client.initialized(types.InitializedParams())

    def _register(self) -> None:
        client = self.client

        @client.feature("kb/indexStatus")
        def index_status(params: Any) -> None:
            with self._lock:
                self.notifications.append(("kb/indexStatus", plain(params)))

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(params: types.LogMessageParams) -> None:
            with self._lock:
                self.notifications.append(("window/logMessage", params.message))

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(params: types.ShowMessageParams) -> None:
            with self._lock:
                self.notifications.append(("window/showMessage", params.message))

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create_progress(params: types.WorkDoneProgressCreateParams) -> None:
            with self._lock:
                self.progress.append(("create", {"token": params.token}))

        @client.feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            value = params.value
            kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
            data = value if isinstance(value, dict) else plain(value)
            with self._lock:
                self.progress.append((str(kind), data if isinstance(data, dict) else {"value": data}))

    # -- plumbing ------------------------------------------------------------------------------
    def _run(self, coro: Any, timeout: float = REQUEST_TIMEOUT) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def request(self, method: str, params: Any = None, timeout: float = REQUEST_TIMEOUT) -> Any:
        async def send() -> Any:
            return await self.client.protocol.send_request_async(method, params)

        return plain(self._run(send(), timeout))

    def search(self, query: str, **extra: Any) -> protocol.SearchResult:
        return msgspec.convert(self.request("kb/search", {"query": query, **extra}), protocol.SearchResult)

    def status(self) -> protocol.StatusResult:
        return msgspec.convert(self.request("kb/status", {}), protocol.StatusResult)

    def notify(self, method: str, params: Any) -> None:
        self.loop.call_soon_threadsafe(self.client.protocol.notify, method, params)

    def wait_for(self, predicate: Callable[[], Any], timeout: float = INDEX_TIMEOUT, what: str = "") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}\n{self.log_tail()}")

    def statuses(self) -> list[dict[str, Any]]:
        with self._lock:
            return [p for m, p in self.notifications if m == "kb/indexStatus"]

    def wait_ready(self, timeout: float = INDEX_TIMEOUT) -> protocol.StatusResult:
        """Until `kb/status` says ready with an empty queue."""

        def ready() -> protocol.StatusResult | None:
            status = self.status()
            return status if status.state == "ready" and status.queue == 0 and status.roots else None

        return self.wait_for(ready, timeout, "the index to be ready")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def close(self) -> None:
        try:
            self._run(self.client.shutdown_async(None), timeout=10)
            self.client.exit(None)
            self._run(asyncio.wait_for(self.client.stop(), 10), timeout=15)
        except Exception:
            server = self.client._server
            if server is not None and server.returncode is None:
                server.kill()
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=5)


def make_workspace(tmp_path: Path, name: str = "notes") -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES, root)
    (root / ".kbls.yaml").write_text("store: .kbls-store\n", encoding="utf-8")
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


@pytest.fixture
def session(workspace: Path, tmp_path: Path):
    s = Session([workspace], tmp_path)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def ready(session: Session) -> Session:
    session.wait_ready()
    return session
