"""`kbls mcp` driven by the MCP SDK's own client (`ClientSession` over `stdio_client`), spawning
the real server on an indexed copy of tests/fixtures/notes.

The session lists the tools with their schemas, calls search, related, read_note and status,
and is refused `..`, paths outside the roots, a symlink leading out and files the index leaves
out. Roots come from `--root`, or from the client's roots (the SDK's `list_roots` callback).
A root without an index gets "run `kbls index`", and nothing is written for it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.context import ClientRequestContext
from mcp.types import CallToolResult, ListRootsResult, Root
from pydantic import FileUrl

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "notes"
QUERY = "who owns a value after it is moved"
pytestmark = pytest.mark.mcp

Scenario = Callable[[ClientSession], Awaitable[None]]


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(XDG_CACHE_HOME=str(cache), HF_HUB_OFFLINE="1")
    return env


def _kbls(*args: str, env: dict[str, str]) -> str:
    result = subprocess.run([sys.executable, "-m", "kbls", *args], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An indexed copy of the fixture notes (explicit store and default store), plus bait outside it."""
    base = tmp_path_factory.mktemp("mcp")
    root = base / "notes"
    shutil.copytree(FIXTURES, root)
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nthe launch code is 0000\n")
    (root / "leak.md").symlink_to(outside / "secret.md")
    (root / ".git").mkdir()
    (root / ".git" / "notes.md").write_text("# not a note\n")
    (root / "git-link.md").symlink_to(root / ".git" / "notes.md")
    (root / "credentials.json").write_text('{"token": "x"}\n')
    cache = base / "cache"
    store = base / "store"
    env = _env(cache)
    _kbls("index", "--root", str(root), "--store", str(store), env=env)
    _kbls("index", "--root", str(root), env=env)  # the default store, in XDG_CACHE_HOME: for client roots
    unindexed = base / "unindexed"
    shutil.copytree(FIXTURES / "cooking", unindexed)
    return {"root": root, "store": store, "cache": cache, "outside": outside, "unindexed": unindexed, "base": base}


def _store_files(cache: Path) -> dict[str, bytes]:
    """Every file under the stores' folder and its bytes, but for the `-wal`/`-shm` files SQLite
    itself keeps beside a WAL store (a read-only reader creates them; they must stay empty of
    writes: the WAL is checked to hold no frame)."""
    files: dict[str, bytes] = {}
    for path in sorted(cache.rglob("*")):
        if path.is_file() and path.name.endswith(("-shm", "-wal")):
            assert not path.name.endswith("-wal") or path.stat().st_size == 0, f"{path} holds writes"
        elif path.is_file():
            files[str(path.relative_to(cache))] = path.read_bytes()
    return files


def _session(
    kb: dict[str, Path],
    args: list[str],
    scenario: Scenario,
    roots: list[Path] | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> None:
    """Run `kbls mcp ARGS` (in `cwd`, default the temp base; `env` over the usual environment) and
    `scenario` against it in one client session."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kbls", "mcp", *args], env={**_env(kb["cache"]), **(env or {})},
        cwd=str(cwd or kb["base"]),
    )

    async def list_roots(context: ClientRequestContext) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=FileUrl(path.as_uri()), name=path.name) for path in roots or []])

    async def main() -> None:
        with (kb["base"] / "mcp-stderr.log").open("a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                callback = list_roots if roots is not None else None
                async with ClientSession(read, write, list_roots_callback=callback) as session:
                    await session.initialize()
                    with anyio.fail_after(120):
                        await scenario(session)

    anyio.run(main)


def _ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content


def _error(result: CallToolResult) -> str:
    assert result.is_error, result.structured_content
    text = result.content[0]
    assert text.type == "text"
    return text.text


def test_tools_search_related_read_note_and_status_over_stdio(kb: dict[str, Path]) -> None:
    root = kb["root"]
    cli_hits = json.loads(
        _kbls("search", QUERY, "--root", str(root), "--store", str(kb["store"]), "--limit", "3", "--json", env=_env(kb["cache"]))
    )

    async def scenario(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == {"search", "related", "read_note", "status"}
        for tool in tools.values():
            assert tool.description and len(tool.description) > 60, tool.name
            assert tool.annotations is not None and tool.annotations.read_only_hint is True
            assert tool.output_schema is not None
        search_schema = tools["search"].input_schema
        assert search_schema["required"] == ["query"]
        assert {"query", "limit", "mode", "tags", "paths", "types"} <= set(search_schema["properties"])
        assert "roots" not in search_schema["properties"]  # filled by the server, not by the model
        assert set(tools["read_note"].input_schema["properties"]) == {"path", "start_line", "end_line"}

        found = _ok(await session.call_tool("search", {"query": QUERY, "limit": 3}))
        hits = found["hits"]
        assert [(h["path"], h["start_line"], h["end_line"]) for h in hits] == [
            (h["path"], h["start_line"] + 1, h["end_line"] + 1) for h in cli_hits
        ], "MCP hits are the CLI's, with 1-based lines"
        assert hits[0]["root"] == str(root) and hits[0]["breadcrumb"] and hits[0]["snippet"] and hits[0]["score"] > 0

        tagged = _ok(await session.call_tool("search", {"query": "bread", "tags": ["#baking"], "mode": "lexical"}))
        assert {h["path"] for h in tagged["hits"]} == {"cooking/sourdough.md"}
        invalid = await session.call_tool("search", {"query": QUERY, "limit": 0})
        assert invalid.is_error

        related = _ok(await session.call_tool("related", {"path": "rust/ownership.md"}))["hits"]
        assert "rust/borrowing.md" in [h["path"] for h in related]
        assert "rust/ownership.md" not in [h["path"] for h in related]
        assert all(h["reasons"] for h in related)
        assert "not in the index" in _error(await session.call_tool("related", {"path": "credentials.json"}))

        lines = (root / "rust" / "ownership.md").read_text().splitlines()
        top = hits[0]
        section = _ok(
            await session.call_tool(
                "read_note", {"path": top["path"], "start_line": top["start_line"], "end_line": top["end_line"]}
            )
        )
        assert section["text"] == "\n".join(lines[top["start_line"] - 1 : top["end_line"]])
        assert section["total_lines"] == len(lines) and section["truncated"] is False
        whole = _ok(await session.call_tool("read_note", {"path": str(root / "rust" / "ownership.md")}))
        assert whole["text"] == "\n".join(lines) and whole["path"] == "rust/ownership.md"

        refused = {
            "../outside/secret.md": "`..`",
            "rust/../../outside/secret.md": "`..`",
            str(kb["outside"] / "secret.md"): "outside the indexed roots",
            "/etc/passwd": "outside the indexed roots",
            "leak.md": "leads outside the root",
            ".git/notes.md": "not a note",
            "credentials.json": "not a note",
            "git-link.md": "leaves out",  # a link inside the root to .git/notes.md
        }
        for path, reason in refused.items():
            message = _error(await session.call_tool("read_note", {"path": path}))
            assert reason in message, (path, message)
            assert "0000" not in message

        state = _ok(await session.call_tool("status", {}))["roots"]
        assert len(state) == 1 and state[0]["indexed"] is True and state[0]["root"] == str(root)
        assert state[0]["files"] == 7 and state[0]["chunks"] > 0 and "MiniLM" in state[0]["model"]

    _session(kb, ["--root", str(root), "--store", str(kb["store"])], scenario)


def test_roots_come_from_the_client_and_an_unindexed_root_says_run_kbls_index(kb: dict[str, Path]) -> None:
    root, unindexed = kb["root"], kb["unindexed"]
    broken = kb["base"] / "broken"
    broken.mkdir(exist_ok=True)
    (broken / ".kbls.yaml").write_text("max_file_bytes: lots\n")
    stores_before = _store_files(kb["cache"] / "kbls")

    async def scenario(session: ClientSession) -> None:
        state = {r["root"]: r for r in _ok(await session.call_tool("status", {}))["roots"]}
        assert state[str(root)]["indexed"] is True
        assert state[str(unindexed)]["indexed"] is False
        assert "run `kbls index" in state[str(unindexed)]["message"]
        assert state[str(broken)]["indexed"] is False and "max_file_bytes" in state[str(broken)]["message"]

        found = _ok(await session.call_tool("search", {"query": QUERY, "limit": 3}))
        assert found["hits"][0]["path"] == "rust/ownership.md" and found["hits"][0]["root"] == str(root)
        assert any("kbls index" in note and str(unindexed) in note for note in found["notes"])
        assert any("max_file_bytes" in note and str(broken) in note for note in found["notes"])
        # A note of the unindexed root cannot be read: only indexed roots are served.
        assert "kbls index" in _error(await session.call_tool("read_note", {"path": str(unindexed / "pasta.md")}))

    _session(kb, [], scenario, roots=[root, unindexed, broken])
    assert _store_files(kb["cache"] / "kbls") == stores_before, "kbls mcp wrote, created or removed store files"
    assert not any(unindexed.rglob("*.sqlite3*"))


def test_only_unindexed_roots_give_a_tool_error_that_says_run_kbls_index(kb: dict[str, Path]) -> None:
    unindexed = kb["unindexed"]

    async def scenario(session: ClientSession) -> None:
        message = _error(await session.call_tool("search", {"query": "pasta"}))
        assert "has no kbls index yet" in message and f"kbls index --root {unindexed}" in message
        state = _ok(await session.call_tool("status", {}))["roots"]
        assert state == [
            {**state[0], "root": str(unindexed), "indexed": False, "files": 0, "chunks": 0}
        ]

    _session(kb, ["--root", str(unindexed)], scenario)


def test_without_root_arguments_or_client_roots_the_working_folder_is_the_root(kb: dict[str, Path]) -> None:
    async def scenario(session: ClientSession) -> None:
        state = _ok(await session.call_tool("status", {}))["roots"]
        assert [(r["root"], r["indexed"]) for r in state] == [(str(kb["root"]), True)]
        note = _ok(await session.call_tool("read_note", {"path": "travel/japan.md", "start_line": 1, "end_line": 1}))
        assert note["text"] == "---"

    _session(kb, [], scenario, cwd=kb["root"])


def test_a_store_rebuilt_while_the_server_runs_is_read_anew(tmp_path: Path) -> None:
    """`kbls index --rebuild` (or a daemon that rebuilds a damaged store) puts a new store file in
    place of the one `kbls mcp` opened; the server kept reading the old, deleted file and never
    saw a note indexed since (issue 14: a replaced store must be noticed)."""
    root, store, cache = tmp_path / "notes", tmp_path / "store", tmp_path / "cache"
    shutil.copytree(FIXTURES / "rust", root)
    env = _env(cache)
    _kbls("index", "--root", str(root), "--store", str(store), env=env)
    kb = {"cache": cache, "base": tmp_path}
    query = {"query": "sourdough levain starter", "mode": "lexical"}

    async def scenario(session: ClientSession) -> None:
        assert not _ok(await session.call_tool("search", query))["hits"]
        (root / "bread.md").write_text("# Bread\n\nFeed the sourdough levain starter twice a day.\n")
        await anyio.to_thread.run_sync(lambda: _kbls("index", "--root", str(root), "--store", str(store), "--rebuild", env=env))
        hits = _ok(await session.call_tool("search", query))["hits"]
        assert [hit["path"] for hit in hits] == ["bread.md"]
        assert _ok(await session.call_tool("status", {}))["roots"][0]["files"] == 3

    _session(kb, ["--root", str(root), "--store", str(store)], scenario)


def test_a_root_and_store_written_with_a_tilde_name_the_home_folder(kb: dict[str, Path]) -> None:
    """Agent hosts start `kbls mcp` from a JSON config, with no shell to expand `~`."""

    async def scenario(session: ClientSession) -> None:
        state = _ok(await session.call_tool("status", {}))["roots"]
        assert len(state) == 1 and state[0]["root"] == str(kb["root"]) and state[0]["indexed"] is True
        hits = _ok(await session.call_tool("search", {"query": QUERY, "limit": 3}))["hits"]
        assert hits and hits[0]["path"] == "rust/ownership.md"

    _session(kb, ["--root", "~/notes", "--store", "~/store"], scenario, env={"HOME": str(kb["base"])})
