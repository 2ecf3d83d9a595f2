"""The per-user daemon's life: idle exit, the in-process fallback, the relay's session record."""

from __future__ import annotations

import fcntl
import os
import subprocess
import time
from pathlib import Path

import pytest
from tests.support.corpus import make_workspace
from tests.support.lsp_client import LspSession
from tests.support.processes import KBLS
from tests.support.raw_stdio import frame, initialize_params, read_message
from tests.support.user_daemon import DaemonEnv

from kbls.userdaemon.main import idle_minutes
from kbls.userdaemon.paths import daemon_paths
from kbls.userdaemon.session import Session
from kbls.userdaemon.spawn import connect


def test_the_daemon_exits_when_idle_and_removes_its_socket(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    root = make_workspace(tmp_path, "notes")
    env = {**daemon_env.env, "KBLS_DAEMON_IDLE_MINUTES": "0.05"}  # 3 s
    with LspSession([root], tmp_path, env=env, daemon=True) as editor:
        editor.wait_ready()
        pid = daemon_env.pid()
        assert pid is not None
        time.sleep(4)  # a connected client keeps it alive past the idle time
        assert daemon_env.pid() == pid
        assert editor.search("rust ownership").hits
    deadline = time.monotonic() + 60
    while daemon_env.pid() is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert daemon_env.pid() is None
    assert daemon_env.sockets() == []


def test_serve_falls_back_in_process_when_the_runtime_folder_is_unsafe(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    root = make_workspace(tmp_path, "notes")
    daemon_env.folder.mkdir(mode=0o700)
    os.chmod(daemon_env.folder, 0o755)  # open to others: refused, never used
    with LspSession([root], tmp_path, env=daemon_env.env, daemon=True) as editor:
        editor.wait_ready()
        assert editor.search("rust ownership").hits
        assert "not using the per-user daemon" in editor.log_file.read_text()
    assert daemon_env.sockets() == []
    assert daemon_env.pid() is None


def test_standalone_serves_in_process(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    root = make_workspace(tmp_path, "notes")
    with LspSession([root], tmp_path, env={**daemon_env.env, "KBLS_NO_DAEMON": "1"}, daemon=True) as editor:
        editor.wait_ready()
        assert editor.search("rust ownership").hits
    assert not daemon_env.folder.exists() or daemon_env.sockets() == []


def _message(method: str | None = None, **fields: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", **({"method": method} if method else {}), **fields}


def test_the_relay_keeps_the_workspace_folders_current_for_a_replay() -> None:
    session = Session()
    folder = {"uri": "file:///a", "name": "a"}
    assert session.from_editor(_message("initialize", id=1, params={"workspaceFolders": [folder], "capabilities": {}}))
    assert session.from_editor(_message("initialized", params={}))
    event = {"added": [{"uri": "file:///b", "name": "b"}], "removed": [folder]}
    assert session.from_editor(_message("workspace/didChangeWorkspaceFolders", params={"event": event}))
    assert session.initialize is not None and session.initialized
    assert session.initialize["workspaceFolders"] == [{"uri": "file:///b", "name": "b"}]


def test_the_relay_drops_answers_meant_for_a_lost_daemon() -> None:
    session = Session()
    assert session.from_backend(_message("window/workDoneProgress/create", id="p1", params={"token": "t"}))
    session.server_requests.clear()  # the daemon was lost: its requests died with it
    assert not session.from_editor(_message(id="p1", result=None))
    assert session.from_backend(_message("window/workDoneProgress/create", id="p2", params={"token": "u"}))
    assert session.from_editor(_message(id="p2", result=None))


def test_the_relay_tracks_pending_requests_and_its_own_replay() -> None:
    session = Session()
    session.sent(_message("kb/search", id=7, params={"query": "x"}))
    assert session.pending == {7: "kb/search"}
    assert session.from_backend(_message(id=7, result={}))
    assert session.pending == {}
    session.own_ids.add("kbls-relay-1")
    assert not session.from_backend(_message(id="kbls-relay-1", result={"capabilities": {}}))


def test_a_second_daemon_exits_at_once_and_leaves_the_first_serving(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    root = make_workspace(tmp_path, "notes")
    with LspSession([root], tmp_path, env=daemon_env.env, daemon=True) as editor:
        editor.wait_ready()
        first = daemon_env.pid()
        second = subprocess.run(
            [str(KBLS), "daemon"], env=daemon_env.env, capture_output=True, text=True, timeout=120
        )
        assert second.returncode == 0, second.stderr
        assert "another kbls daemon already serves" in daemon_env.log()
        assert daemon_env.pid() == first
        assert editor.search("rust ownership").hits


def test_the_relay_exits_after_exit_while_the_editor_keeps_its_end_open(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    root = make_workspace(tmp_path, "notes")
    env = {**daemon_env.env, "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}
    relay = subprocess.Popen([str(KBLS), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert relay.stdin is not None and relay.stdout is not None
    try:
        params = initialize_params(root)
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None},
        ):
            relay.stdin.write(frame(message))
        relay.stdin.flush()
        answers = [read_message(relay.stdout) for _ in range(2)]
        while answers[-1] is not None and answers[-1].get("id") != 2:
            answers.append(read_message(relay.stdout))
        assert answers[-1] is not None and "result" in answers[-1]
        relay.stdin.write(frame({"jsonrpc": "2.0", "method": "exit", "params": None}))
        relay.stdin.flush()
        assert relay.wait(30) == 0  # stdin is still open
        assert daemon_env.pid() is not None  # the daemon stays for other clients
    finally:
        if relay.poll() is None:
            relay.kill()
            relay.wait()


def test_a_lost_daemon_fails_its_pending_requests_and_ends_its_progress() -> None:
    session = Session()
    session.sent(_message("kb/search", id=3, params={"query": "x"}))
    begin = {"token": "t1", "value": {"kind": "begin", "title": "indexing"}}
    assert session.from_backend(_message("$/progress", params=begin))
    assert session.from_backend(_message("$/progress", params={"token": "t2", "value": {"kind": "begin"}}))
    assert session.from_backend(_message("$/progress", params={"token": "t2", "value": {"kind": "end"}}))
    told = session.lost()
    assert [m.get("id") for m in told if "error" in m] == [3]
    assert [m["params"]["token"] for m in told if m.get("method") == "$/progress"] == ["t1"]
    assert session.pending == {} and session.progress == set() and session.lost() == []


def test_a_lost_daemon_does_not_fail_the_editors_initialize_but_keeps_it_for_the_next() -> None:
    session = Session()
    assert session.from_editor(_message("initialize", id=1, params={"capabilities": {}}))
    session.sent(_message("initialize", id=1, params={"capabilities": {}}))
    session.sent(_message("kb/search", id=2, params={"query": "x"}))
    told = session.lost()
    assert [m.get("id") for m in told if "error" in m] == [2]
    assert session.unanswered_initialize == 1


def test_a_daemon_started_while_the_last_one_is_still_stopping_takes_over(
    tmp_path: Path, daemon_env: DaemonEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An idle daemon removes its socket first and lets go of its pid lock last (after closing
    its roots). A relay that finds no socket in between starts a new daemon: that one must wait
    for the lock and serve, not exit at once and leave the relay waiting a minute for a socket."""
    for name in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, daemon_env.env[name])
    paths = daemon_paths()
    with open(paths.pid_file, "a+") as stopping:  # the old daemon, socket gone, still closing
        fcntl.flock(stopping, fcntl.LOCK_EX)
        new = subprocess.Popen([str(KBLS), "daemon"], env=daemon_env.env, stderr=subprocess.PIPE)
        try:
            time.sleep(3)
            assert new.poll() is None, "the new daemon gave up while the old one was stopping"
            assert connect(paths) is None
        finally:
            fcntl.flock(stopping, fcntl.LOCK_UN)
        try:
            deadline = time.monotonic() + 60
            sock = connect(paths)
            while sock is None and new.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
                sock = connect(paths)
            assert sock is not None, daemon_env.log()
            sock.close()
            assert daemon_env.pid() == new.pid
        finally:
            new.terminate()
            new.wait(30)


def test_an_idle_time_of_zero_still_serves_the_editor_that_started_the_daemon(
    tmp_path: Path, daemon_env: DaemonEnv
) -> None:
    """`KBLS_DAEMON_IDLE_MINUTES=0` (exit as soon as the last client leaves) must not make the
    daemon exit before its first client connects: the relay waited a minute, then served in-process."""
    root = make_workspace(tmp_path, "notes")
    env = {**daemon_env.env, "KBLS_DAEMON_IDLE_MINUTES": "0"}
    started = time.monotonic()
    with LspSession([root], tmp_path, env=env, daemon=True, log_level="INFO") as editor:
        editor.wait_ready()
        assert time.monotonic() - started < 45, "the relay waited for a daemon that had gone"
        assert "relaying to the kbls daemon" in editor.log_file.read_text()
        assert daemon_env.pid() is not None
    deadline = time.monotonic() + 30
    while daemon_env.pid() is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert daemon_env.pid() is None  # and it leaves with its last client


@pytest.mark.parametrize(("raw", "minutes"), [("", 10.0), ("2.5", 2.5), ("-3", 0.0), ("soon", 10.0), ("nan", 10.0)])
def test_the_idle_time_from_the_environment(monkeypatch: pytest.MonkeyPatch, raw: str, minutes: float) -> None:
    """A value that is not a number of minutes is the default; `nan` passed float() and made
    every idle timer fire at once (a daemon that exits before its first client)."""
    monkeypatch.setenv("KBLS_DAEMON_IDLE_MINUTES", raw)
    assert idle_minutes(None) == minutes
    assert idle_minutes(1.5) == 1.5


def test_a_daemon_that_dies_at_start_costs_the_editor_seconds_not_a_minute(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    """The relay waited the whole start timeout (60 s) for the socket of a daemon that had died at
    once (made to, here, by a sitecustomize); once no daemon holds the pid lock it serves in-process."""
    root = make_workspace(tmp_path, "notes")
    crash = tmp_path / "crash"
    crash.mkdir()
    (crash / "sitecustomize.py").write_text("import os, sys\nif sys.argv[-1:] == ['daemon']:\n    os._exit(3)\n")
    env = {**daemon_env.env, "PYTHONPATH": str(crash)}
    started = time.monotonic()
    with LspSession([root], tmp_path, env=env, daemon=True, log_level="INFO") as editor:
        editor.wait_ready()
        waited = time.monotonic() - started
        log = editor.log_file.read_text()
    assert "serving in-process" in log, log
    assert waited < 45, f"the editor waited {waited:.0f} s"
