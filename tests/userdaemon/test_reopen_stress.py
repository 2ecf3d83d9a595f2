"""A minute of searches over the real per-user daemon while its root is reopened every 2 s.

Four threads search the root for 60 s: two as the CLI does (a session with the daemon's socket
per call, `kbls/cliSearch`) and two real `kbls mcp` sessions (the SDK's client, tool `search`,
answered through the daemon). Meanwhile `kbls index --rebuild` replaces the store and the
root's `.kbls.yaml` is rewritten, each every 2 s after the previous one ended, so the daemon
reopens the root under the searches again and again. The daemon must stay up and every answer
must be results or the "being reopened" error: no internal error, no lost connection.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import anyio
import msgspec
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from tests.support.corpus import make_workspace
from tests.support.lsp_client import LspSession
from tests.support.processes import KBLS
from tests.support.user_daemon import DaemonEnv

from kbls.config import CONFIG_FILE
from kbls.userdaemon import queries
from kbls.userdaemon.client import DaemonClient, DaemonUnavailable

#: how long the searches run (the issue's figure); the set-up adds about 20 s.
SECONDS = 60.0
#: the pause after each rebuild and each config rewrite.
PAUSE = 2.0
QUERY = "who owns a value after it is moved"
REOPENING = "being reopened"


class Tally:
    """Answers by kind, and every answer that is neither results nor "being reopened"."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.kinds: Counter[str] = Counter()
        self.wrong: list[str] = []

    def add(self, kind: str, wrong: str | None = None) -> None:
        with self._lock:
            self.kinds[kind] += 1
            if wrong is not None:
                self.wrong.append(wrong)


def _cli_searches(root: Path, until: float, tally: Tally) -> None:
    query = msgspec.to_builtins(queries.SearchQuery(root=str(root), query=QUERY, limit=5))
    while time.monotonic() < until:
        client = DaemonClient.running()
        if client is None:
            tally.add("cli: no daemon", "the CLI found no daemon listening")
            time.sleep(0.2)
            continue
        try:
            result = client.request(queries.SEARCH, query)
        except (OSError, DaemonUnavailable) as exc:
            tally.add("cli: error", f"cli: {exc}")
            client.close(polite=False)
            continue
        client.close()
        if isinstance(result, dict) and set(result) == {"kind", "message"}:
            ok = REOPENING in result["message"]
            tally.add("cli: being reopened" if ok else "cli: failure", None if ok else f"cli: {result}")
        elif isinstance(result, dict) and "hits" in result:
            tally.add("cli: results" if result["hits"] else "cli: no hits")
        else:
            tally.add("cli: other", f"cli: {result!r}")


def _mcp_searches(root: Path, env: dict[str, str], cwd: Path, until: float, tally: Tally) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kbls", "mcp", "--root", str(root)], env=env, cwd=str(cwd)
    )

    async def main() -> None:
        with (cwd / "mcp-stderr.log").open("a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                while time.monotonic() < until:
                    with anyio.fail_after(60):
                        result = await session.call_tool("search", {"query": QUERY, "limit": 5})
                    text = " ".join(getattr(c, "text", "") for c in result.content)
                    if not result.is_error:
                        hits = (result.structured_content or {}).get("hits")
                        tally.add("mcp: results" if hits else "mcp: no hits")
                    elif REOPENING in text:
                        tally.add("mcp: being reopened")
                    else:
                        tally.add("mcp: error", f"mcp: {text}")

    anyio.run(main)


def _rebuilds(root: Path, env: dict[str, str], until: float, tally: Tally) -> None:
    while time.monotonic() < until:
        done = subprocess.run(
            [str(KBLS), "index", "--rebuild", "--root", str(root)], capture_output=True, text=True, env=env,
            timeout=120,
        )
        tally.add("rebuild" if done.returncode == 0 else "rebuild failed")
        time.sleep(PAUSE)


def _config_rewrites(root: Path, until: float, tally: Tally) -> None:
    """Each rewrite replaces the file whole (written beside it, then renamed): a `.kbls.yaml` read
    half-written names another store, and the daemon then leaves the CLI to search by itself."""
    original = (root / CONFIG_FILE).read_text(encoding="utf-8")
    turn = 0
    while time.monotonic() < until:
        turn += 1
        staged = root.parent / f"{CONFIG_FILE}.{turn}"
        staged.write_text(f"{original}# rewrite {turn}\n", encoding="utf-8")
        os.replace(staged, root / CONFIG_FILE)
        tally.add("config rewrite")
        time.sleep(PAUSE)


def test_searches_survive_a_minute_of_rebuilds_and_config_rewrites(
    tmp_path: Path, daemon_env: DaemonEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(tmp_path, "notes")
    for name in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, daemon_env.env[name])
    monkeypatch.delenv("KBLS_NO_DAEMON", raising=False)
    with LspSession([root], tmp_path, env=daemon_env.env, daemon=True) as editor:
        editor.wait_ready()
        pid = daemon_env.pid()
        assert pid is not None
        tally = Tally()
        until = time.monotonic() + SECONDS
        threads = [
            threading.Thread(target=_cli_searches, args=(root, until, tally)),
            threading.Thread(target=_cli_searches, args=(root, until, tally)),
            threading.Thread(target=_mcp_searches, args=(root, daemon_env.env, tmp_path, until, tally)),
            threading.Thread(target=_mcp_searches, args=(root, daemon_env.env, tmp_path, until, tally)),
            threading.Thread(target=_rebuilds, args=(root, daemon_env.env, until, tally)),
            threading.Thread(target=_config_rewrites, args=(root, until, tally)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(SECONDS + 180)
        print(dict(tally.kinds))
        assert not any(thread.is_alive() for thread in threads), dict(tally.kinds)
        assert tally.wrong == [], (tally.wrong[:10], dict(tally.kinds))
        assert daemon_env.pid() == pid  # the same daemon, never restarted
        assert tally.kinds["cli: results"] and tally.kinds["mcp: results"], dict(tally.kinds)
        assert tally.kinds["rebuild"] >= 3 and tally.kinds["config rewrite"] >= 10, dict(tally.kinds)
        # And it still serves the editor.
        editor.wait_ready()
        assert editor.search(QUERY).hits
    log = daemon_env.log()
    for bad in ("Traceback", "Fatal Python error"):
        assert bad not in log, log[max(0, log.index(bad) - 1500) : log.index(bad) + 3000]
