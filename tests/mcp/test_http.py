"""`kbls mcp --http`: the real server on a loopback port, driven by the MCP SDK's own streamable
HTTP client, answers a session that carries the bearer token and refuses every request without
it (no token, another token) with 401 before it reaches MCP. A token file other users may read,
a short token, or `--http` without `--token-file` is refused before any port is opened.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "notes"
TOKEN = "s3cret-token-for-the-kbls-http-test"
pytestmark = pytest.mark.mcp


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(XDG_CACHE_HOME=str(cache), HF_HUB_OFFLINE="1", KBLS_NO_DAEMON="1")
    return env


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _token_file(folder: Path, token: str = TOKEN, mode: int = 0o600) -> Path:
    path = folder / "mcp token"
    path.write_text(token + "\n")
    path.chmod(mode)
    return path


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An indexed copy of the fixtures' rust notes in a folder with a space and an accent."""
    base = tmp_path_factory.mktemp("mcp-http")
    root = base / "My Notes é"
    shutil.copytree(FIXTURES / "rust", root)
    store = base / "store"
    cache = base / "cache"
    done = subprocess.run(
        [sys.executable, "-m", "kbls", "index", "--root", str(root), "--store", str(store)],
        env=_env(cache), capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return {"base": base, "root": root, "store": store, "cache": cache}


@pytest.fixture(scope="module")
def served(notes: dict[str, Path]) -> Iterator[str]:
    """`kbls mcp --http 127.0.0.1:PORT` on the indexed notes; yields its endpoint URL."""
    port = _free_port()
    args = ["--http", f"127.0.0.1:{port}", "--token-file", str(_token_file(notes["base"]))]
    args += ["--root", str(notes["root"]), "--store", str(notes["store"])]
    errlog = (notes["base"] / "mcp-http.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kbls", "mcp", *args], env=_env(notes["cache"]), stdout=errlog, stderr=errlog
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (notes["base"] / "mcp-http.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "kbls mcp --http did not listen within 60 s"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        errlog.close()


def test_a_session_with_the_token_searches_the_notes(served: str, notes: dict[str, Path]) -> None:
    async def main() -> None:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with (
            client,
            streamable_http_client(served, http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            with anyio.fail_after(120):
                tools = {tool.name for tool in (await session.list_tools()).tools}
                assert {"search", "related", "read_note", "status"} <= tools
                result = await session.call_tool("search", {"query": "who owns a value after it is moved"})
        assert not result.is_error, result.content
        assert result.structured_content is not None
        hits = result.structured_content["hits"]
        assert hits and hits[0]["path"] == "ownership.md", hits

    anyio.run(main)


@pytest.mark.parametrize("authorization", [None, "Bearer not-the-token-at-all-000000", f"Basic {TOKEN}", f"Bearer {TOKEN}x"])
def test_a_request_without_the_token_is_refused_with_401(served: str, authorization: str | None) -> None:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if authorization:
        headers["Authorization"] = authorization
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    answer = httpx.post(served, json=body, headers=headers, timeout=30)
    assert answer.status_code == 401, answer.text
    assert answer.headers["www-authenticate"].startswith("Bearer")
    assert "jsonrpc" not in answer.text  # refused before MCP saw it


@pytest.mark.parametrize(
    ("token", "mode", "says"),
    [
        (TOKEN, 0o644, "other users may read it (mode 0644)"),
        ("short", 0o600, "shorter than 16 characters"),
    ],
)
def test_a_token_file_others_may_read_or_a_short_token_is_refused(
    notes: dict[str, Path], tmp_path: Path, token: str, mode: int, says: str
) -> None:
    port = _free_port()
    args = ["--http", f"127.0.0.1:{port}", "--token-file", str(_token_file(tmp_path, token, mode))]
    done = subprocess.run(
        [sys.executable, "-m", "kbls", "mcp", *args, "--root", str(notes["root"])],
        env=_env(notes["cache"]), capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_http_without_a_token_file_is_a_usage_error(notes: dict[str, Path]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kbls", "mcp", "--http", "127.0.0.1:1", "--root", str(notes["root"])],
        env=_env(notes["cache"]), capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2 and "--http HOST:PORT and --token-file FILE go together" in done.stderr, done.stderr
