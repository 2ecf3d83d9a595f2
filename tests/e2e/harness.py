"""End-to-end harness: the real `kbls serve` subprocess driven by pygls's LanguageClient over stdio.

`Session` runs the client's event loop on a thread of its own, so tests are plain synchronous
functions: `session.request("kb/search", {...})` returns the result as plain dicts, and
`session.wait_for(predicate)` polls what the server sent (notifications, progress) with a bound.
Each test gets a copy of `tests/fixtures/notes` with `.kbls.yaml` pointing the store inside the
copy, and XDG_CACHE_HOME in the temp dir, so nothing is written to the real home cache.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import random
import shutil
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from kbls.lsp import wire as protocol

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

    def send(self, method: str, params: Any, msg_id: str) -> concurrent.futures.Future[Any]:
        """Send a request without waiting; messages sent in a row leave in that order."""
        box: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def go() -> None:
            inner = self.client.protocol.send_request(method, params, msg_id=msg_id)
            inner.add_done_callback(
                lambda f: box.set_exception(f.exception()) if f.exception() else box.set_result(plain(f.result()))
            )

        self.loop.call_soon_threadsafe(go)
        return box

    def cancel(self, msg_id: str) -> None:
        self.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    def raw_request(self, method: str, params: Any, timeout: float = REQUEST_TIMEOUT) -> Any:
        """Send params exactly as given (no client-side typing), e.g. malformed ones."""
        msg_id = f"raw-{time.monotonic_ns()}"
        box: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def go() -> None:
            self.client.protocol._request_futures[msg_id] = box
            self.client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})

        self.loop.call_soon_threadsafe(go)
        return plain(box.result(timeout))

    def save(self, path: Path) -> None:
        """Tell the server the editor saved `path` (the test wrote it already)."""
        params = types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()))
        self.notify(types.TEXT_DOCUMENT_DID_SAVE, params)

    def paths_found(self, query: str, **extra: Any) -> list[str]:
        return [hit.path for hit in self.search(query, **extra).hits]

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


_WORDS = ["river", "mountain", "garden", "harbour", "lantern", "orchard", "violin", "compass", "meadow", "glacier", "archive", "kettle", "falcon", "bakery", "engine", "ladder", "marble", "pepper", "quartz", "saddle", "tunnel", "velvet", "walnut", "yacht", "anchor", "beacon", "canyon", "dolphin", "ember", "fossil", "granite", "hazel", "island", "jasmine", "kayak", "lemon", "maple", "nectar", "olive", "pebble", "quill", "raven", "spruce", "thistle", "umbrella", "valley", "willow", "timber", "zephyr", "acorn", "bramble", "cedar", "dune", "estuary", "fern", "grove", "heron", "ivy", "juniper", "kelp", "lichen", "moss", "nettle", "oak", "prairie", "reed", "sorrel", "tide", "upland", "vine", "wheat", "yarrow", "alder", "birch", "clover", "daisy", "elm", "flax", "gorse", "heather", "iris"]
_VERBS = ["gathers", "measures", "repairs", "follows", "paints", "carries", "studies", "records", "sorts", "builds"]


def sentence(rng: random.Random, words: int = 12) -> str:
    picked = [rng.choice(_WORDS) for _ in range(words)]
    picked.insert(1, rng.choice(_VERBS))
    return " ".join(picked).capitalize() + "."


def write_notes(root: Path, count: int, *, sections: int = 2, seed: int = 7, folder: str = "gen") -> list[Path]:
    """`count` markdown notes of `sections` sections each, every paragraph distinct."""
    rng = random.Random(seed)
    written = []
    for i in range(count):
        lines = [f"# Note {i} about the {rng.choice(_WORDS)}", ""]
        for s in range(sections):
            lines += [f"## Part {s} on {rng.choice(_WORDS)}", "", " ".join(sentence(rng) for _ in range(8)), ""]
        path = root / folder / f"note-{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")
        written.append(path)
    return written
