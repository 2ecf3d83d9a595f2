"""`kbls mcp` searches through the per-user daemon where it has the root open (issue 12 item 2).

An editor session keeps a root open in the daemon; an MCP client session from the SDK
(`ClientSession` over `stdio_client`) on that root gets the same search and related answers as
with `KBLS_NO_DAEMON=1`, and the daemon's log shows the MCP server's connection. `read_note` and
`status` stay in-process.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from tests.support.corpus import make_workspace
from tests.support.lsp_client import LspSession
from tests.support.user_daemon import DaemonEnv

CLIENT_CONNECTED = "kbls.userdaemon.listener: a client connected"
QUERY = "who owns a value after it is moved"


def _tools(env: dict[str, str], root: Path, cwd: Path) -> dict[str, Any]:
    """search, search with a filter, related and read_note answers of one MCP session."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "kbls", "mcp", "--root", str(root)], env=env,
                                   cwd=str(cwd))
    out: dict[str, Any] = {}

    async def main() -> None:
        with (cwd / "mcp-stderr.log").open("a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                with anyio.fail_after(120):
                    for name, args in (
                        ("search", {"query": QUERY, "limit": 5}),
                        ("search_tagged", {"query": "memory", "tags": ["rust"], "mode": "semantic"}),
                        ("related", {"path": "rust/ownership.md"}),
                        ("read_note", {"path": "rust/ownership.md", "start_line": 1, "end_line": 3}),
                    ):
                        tool = "search" if name.startswith("search") else name
                        result = await session.call_tool(tool, args)
                        assert not result.is_error, result.content
                        out[name] = result.structured_content

    anyio.run(main)
    return out


def test_mcp_answers_from_the_daemon_with_the_same_results(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    root = make_workspace(tmp_path, "notes")
    with LspSession([root], tmp_path, env=daemon_env.env, daemon=True) as editor:
        editor.wait_ready()
        connected = daemon_env.log().count(CLIENT_CONNECTED)
        warm = _tools(daemon_env.env, root, tmp_path)
        assert daemon_env.log().count(CLIENT_CONNECTED) == connected + 1  # one session for the whole MCP run
        cold = _tools({**daemon_env.env, "KBLS_NO_DAEMON": "1"}, root, tmp_path)
        assert daemon_env.log().count(CLIENT_CONNECTED) == connected + 1
    assert warm["search"]["hits"], warm
    assert warm["search_tagged"]["hits"], warm
    assert warm == cold


def test_an_idle_mcp_session_does_not_keep_the_daemon_alive(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    """An agent host keeps `kbls mcp` running for hours; its link to the daemon must not keep a
    daemon whose editors have all left (no root open, the model still loaded) alive forever."""
    root = make_workspace(tmp_path, "notes")
    env = {**daemon_env.env, "KBLS_DAEMON_IDLE_MINUTES": "0.05"}  # 3 s
    params = StdioServerParameters(command=sys.executable, args=["-m", "kbls", "mcp", "--root", str(root)], env=env,
                                   cwd=str(tmp_path))
    editor = LspSession([root], tmp_path, env=env, daemon=True)
    gone = False

    async def main() -> None:
        nonlocal gone
        with (tmp_path / "mcp-stderr.log").open("a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("search", {"query": QUERY, "limit": 3})
                assert not result.is_error, result.content
                assert daemon_env.log().count(CLIENT_CONNECTED) == 2  # the editor's and the MCP server's
                editor.close()  # the last editor leaves; the agent stays
                with anyio.fail_after(120):
                    while daemon_env.pid() is not None:
                        await anyio.sleep(0.5)
                gone = True
                result = await session.call_tool("search", {"query": QUERY, "limit": 3})  # served in-process now
                assert not result.is_error and result.structured_content, result.content

    try:
        editor.wait_ready()
        anyio.run(main)
    finally:
        if editor.alive():
            editor.close()
    assert gone
