"""Hostile or odd clients of the per-user daemon: a bad message gets an error, never a dead relay or daemon."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.support.corpus import make_workspace, store_of, write_config
from tests.support.lsp_client import LspSession
from tests.support.processes import KBLS
from tests.support.raw_stdio import RawStdio, initialize_params
from tests.support.user_daemon import DaemonEnv, daemon_pids

from kbls.userdaemon.spawn import wait_gone


def test_messages_a_client_should_not_send_leave_the_relay_and_the_daemon_serving(
    tmp_path: Path, daemon_env: DaemonEnv
) -> None:
    root = make_workspace(tmp_path, "notes")
    editor = RawStdio(tmp_path, env=daemon_env.env, daemon=True, log_level="INFO")
    try:
        editor.initialize(root)
        odd: list[dict[str, Any]] = [
            # ids must be numbers or strings: an object or a list must not break the relay's records
            {"jsonrpc": "2.0", "id": {"a": 1}, "method": "kb/status", "params": {}},
            {"jsonrpc": "2.0", "id": [1], "method": "kb/status", "params": {}},
            {"jsonrpc": "2.0", "id": [2], "result": None},
            {"jsonrpc": "2.0", "method": "$/progress", "params": {"token": {"t": 1}, "value": {"kind": "begin"}}},
        ]
        # folder changes of the wrong shape (the relay keeps the folders for a replay)
        folders = "workspace/didChangeWorkspaceFolders"
        odd += [
            {"jsonrpc": "2.0", "method": folders, "params": {"event": "x"}},
            {"jsonrpc": "2.0", "method": folders, "params": {"event": {"added": 5, "removed": "y"}}},
        ]
        for message in odd:
            editor.send(message)
        status = editor.request("kb/status", {}, deadline=60)
        deadline = time.monotonic() + 120
        while not status["roots"] and time.monotonic() < deadline:  # the folder is still being opened
            time.sleep(0.2)
            status = editor.request("kb/status", {}, deadline=60)
        assert [r["uri"] for r in status["roots"]] == [root.as_uri()], status
        assert editor.proc.poll() is None, editor.stderr()
    finally:
        editor.close()
    assert "Traceback" not in editor.stderr() + editor.log(), editor.stderr() + editor.log()


def test_an_editor_whose_daemon_dies_before_answering_initialize_is_initialized_by_the_next(
    tmp_path: Path, daemon_env: DaemonEnv
) -> None:
    """The relay connects when the editor starts; a daemon that goes away (idle exit, crash)
    before answering `initialize` must not fail it: an editor gives up on a server whose
    `initialize` failed. The relay sends it to the next daemon under the editor's own id."""
    root = make_workspace(tmp_path, "notes")
    runtime = Path(daemon_env.env["XDG_RUNTIME_DIR"])
    first = subprocess.Popen([str(KBLS), "daemon"], env=daemon_env.env, stderr=subprocess.DEVNULL)
    editor: RawStdio | None = None
    try:
        deadline = time.monotonic() + 60
        while not daemon_env.sockets() and time.monotonic() < deadline:
            time.sleep(0.1)
        editor = RawStdio(tmp_path, env=daemon_env.env, daemon=True, log_level="INFO")
        deadline = time.monotonic() + 30  # the relay is connected once the daemon counts a client
        while "a client connected" not in daemon_env.log() and time.monotonic() < deadline:
            time.sleep(0.1)
        os.kill(first.pid, signal.SIGSTOP)  # it will never answer
        editor.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params(root)})
        time.sleep(0.5)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
        answer = editor.answer(1, deadline=120)
        assert "capabilities" in answer.get("result", {}), answer
        editor.notify("initialized", {})
        status = editor.request("kb/status", {})
        assert status["version"]
        assert [pid for pid in daemon_pids(runtime) if pid != first.pid], "no new daemon"
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(10)
        if editor is not None:
            editor.close()


def test_a_client_whose_own_folder_is_not_open_gets_no_notes_of_another_clients_parent_folder(
    tmp_path: Path, daemon_env: DaemonEnv
) -> None:
    """Client B has `parent/` open; client A only `parent/mine/`, whose store is refused (it names
    the parent's store), so A's folder is never open in the daemon. A's `kb/related` and hover on
    its own note must not be answered from B's root: that would show A notes of `parent/` outside
    its folder (the same holds for the seconds before A's folder is open)."""
    parent = make_workspace(tmp_path, "parent")
    mine = parent / "mine"
    mine.mkdir()
    (mine / "ownership.md").write_text((parent / "rust" / "ownership.md").read_text(encoding="utf-8"), encoding="utf-8")
    write_config(mine, store=store_of(parent))  # two roots on one store: the second is refused
    other = LspSession([parent], tmp_path, env=daemon_env.env, name="parent", daemon=True)
    editor: LspSession | None = None
    try:
        other.wait_ready()
        editor = LspSession([mine], tmp_path, env=daemon_env.env, name="mine", daemon=True)
        editor.wait_for(lambda: "store" in " ".join(editor.shown()) if editor else None, what="the store refusal")
        params = {"uri": (mine / "ownership.md").as_uri(), "limit": 20}
        try:
            hits = editor.request("kb/related", params)["hits"]
        except Exception as exc:  # refused like a note outside every open folder
            assert "outside" in str(exc) or "not open" in str(exc), exc
            hits = []
        outside = [hit["uri"] for hit in hits if not hit["uri"].startswith(mine.as_uri() + "/")]
        assert outside == [], "notes outside the client's folder"
        assert other.request("kb/related", params)["hits"], "the parent's client still gets them"
    finally:
        other.close()
        if editor is not None:
            editor.close()


def test_a_cli_query_before_the_first_editor_does_not_decide_the_daemons_options(
    tmp_path: Path, daemon_env: DaemonEnv
) -> None:
    """The daemon keeps the first client's `initializationOptions`; a `kbls status` (or `kbls mcp`)
    that reaches it first has none and must not count as that client, or the editor's options
    would be ignored with a warning."""
    root = make_workspace(tmp_path, "notes")
    daemon = subprocess.Popen([str(KBLS), "daemon"], env=daemon_env.env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not daemon_env.sockets() and time.monotonic() < deadline:
            time.sleep(0.1)
        cli = subprocess.run([str(KBLS), "status", "--root", str(root)], env=daemon_env.env, capture_output=True,
                             text=True, timeout=120)
        assert cli.returncode == 0, cli.stderr
        assert daemon_env.log().count("a client connected") == 1, daemon_env.log()  # the CLI asked the daemon
        with LspSession([root], tmp_path, env=daemon_env.env, daemon=True, init_options={"search": {"limit": 1}}) as editor:
            editor.wait_ready()
            assert len(editor.search("rust ownership borrowing").hits) == 1  # 3 with the default limit
            assert not [text for text in editor.shown() if "initializationOptions" in text], editor.shown()
    finally:
        daemon.terminate()
        daemon.wait(30)


STANDALONE = "serving this editor from a kbls serve --standalone"


def test_a_relay_whose_standalone_server_keeps_dying_gives_up_instead_of_restarting_it_forever(
    tmp_path: Path, daemon_env: DaemonEnv
) -> None:
    """After its daemon was lost three times the relay serves from a `kbls serve --standalone`
    child; one that dies as soon as it starts (here: made to, by a sitecustomize) was started
    again and again for as long as the editor stayed open. The relay now ends (status 1), so
    the editor says the server stopped."""
    root = make_workspace(tmp_path, "notes")
    crash = tmp_path / "crash"
    crash.mkdir()
    (crash / "sitecustomize.py").write_text("import os, sys\nif '--standalone' in sys.argv:\n    os._exit(3)\n")
    env = {**daemon_env.env, "PYTHONPATH": str(crash)}
    editor = RawStdio(tmp_path, env=env, daemon=True, log_level="INFO")
    try:
        editor.initialize(root)
        # Daemons lost three times within 30 s: the relay turns to a standalone server (more
        # kills when a loaded machine spreads three restarts over more than 30 s).
        deadline = time.monotonic() + 240
        while STANDALONE not in editor.log() and time.monotonic() < deadline:
            pid = daemon_env.pid()  # the living daemon's own record (not the process that started it)
            if pid is None:
                time.sleep(0.05)
                continue
            os.kill(pid, signal.SIGKILL)
            assert wait_gone(pid, 10)
        assert editor.proc.wait(60) == 1
        assert 1 <= editor.log().count(STANDALONE) <= 3, editor.log()
    finally:
        if editor.proc.poll() is None:
            editor.proc.kill()
        editor.close()
