"""Hostile or odd clients of the per-user daemon: a bad message gets an error, never a dead relay or daemon."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.support.corpus import make_workspace
from tests.support.raw_stdio import RawStdio
from tests.support.user_daemon import DaemonEnv


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
