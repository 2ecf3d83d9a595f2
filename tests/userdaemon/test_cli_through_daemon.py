"""The CLI asks a running per-user daemon that has the root open, with the same JSON (issue 12 item 3).

Each command is run twice against one indexed root while an editor session keeps it open in the
daemon: as is (answered by the daemon: its log shows the CLI's connection) and with
`KBLS_NO_DAEMON=1` (the CLI opens the store itself); the outputs must be equal. Without a daemon
the CLI starts none.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.corpus import make_workspace
from tests.support.lsp_client import LspSession
from tests.support.processes import KBLS
from tests.support.user_daemon import DaemonEnv

CLIENT_CONNECTED = "kbls.userdaemon.listener: a client connected"


def _kbls(args: list[str], env: dict[str, str], cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(KBLS), *args], capture_output=True, text=True, timeout=300, env={**env, **extra}, cwd=cwd
    )


def test_cli_answers_from_the_daemon_with_the_same_json(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    root = make_workspace(tmp_path, "notes")
    commands = [
        ["search", "who owns a value after it is moved", "--json"],
        ["search", "bread yeast", "--json", "--mode", "lexical", "--limit", "3", "--group-by-file"],
        ["search", "tag:rust memory", "--json"],
        ["related", "rust/ownership.md", "--json"],
        ["related", "rust/ownership.md:3", "--json", "--limit", "2"],
        ["status", "--json"],
    ]
    with LspSession([root], tmp_path, env=daemon_env.env, daemon=True) as editor:
        editor.wait_ready()
        for command in commands:
            connected = daemon_env.log().count(CLIENT_CONNECTED)
            warm = _kbls(command, daemon_env.env, root)
            assert warm.returncode == 0, warm.stderr
            assert daemon_env.log().count(CLIENT_CONNECTED) == connected + 1, command  # the daemon answered
            cold = _kbls(command, daemon_env.env, root, KBLS_NO_DAEMON="1")
            assert cold.returncode == 0, cold.stderr
            assert json.loads(warm.stdout) == json.loads(cold.stdout), command
            assert json.loads(warm.stdout), command

        # Errors keep the CLI's message and exit status.
        bad = ["search", "x", "--json", "--limit", "0"]
        warm, cold = _kbls(bad, daemon_env.env, root), _kbls(bad, daemon_env.env, root, KBLS_NO_DAEMON="1")
        assert (warm.returncode, warm.stderr) == (cold.returncode, cold.stderr)
        assert warm.returncode == 2
        outside = ["related", str(tmp_path / "elsewhere.md"), "--json"]
        warm, cold = _kbls(outside, daemon_env.env, root), _kbls(outside, daemon_env.env, root, KBLS_NO_DAEMON="1")
        assert (warm.returncode, warm.stderr) == (cold.returncode, cold.stderr)


def test_a_root_the_daemon_does_not_serve_is_searched_by_the_cli(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    served = make_workspace(tmp_path, "served")
    other = make_workspace(tmp_path, "other")
    assert _kbls(["index"], daemon_env.env, other).returncode == 0
    with LspSession([served], tmp_path, env=daemon_env.env, daemon=True) as editor:
        editor.wait_ready()
        connected = daemon_env.log().count(CLIENT_CONNECTED)
        warm = _kbls(["search", "rust ownership", "--json"], daemon_env.env, other)
        assert warm.returncode == 0, warm.stderr
        hits = json.loads(warm.stdout)
        assert hits and all(hit["root"] == str(other.resolve()) for hit in hits)
        # it asked (one connection) and was told the root is not open there
        assert daemon_env.log().count(CLIENT_CONNECTED) == connected + 1


def test_the_cli_never_starts_a_daemon(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    root = make_workspace(tmp_path, "notes")
    assert _kbls(["index"], daemon_env.env, root).returncode == 0
    for command in (["search", "rust", "--json"], ["status", "--json"], ["related", "rust/ownership.md", "--json"]):
        assert _kbls(command, daemon_env.env, root).returncode == 0
    assert daemon_env.sockets() == []
    assert daemon_env.pid() is None
