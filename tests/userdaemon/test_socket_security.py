"""The daemon's socket is private: a 0700 folder, a 0600 socket, peers of our uid only (issue 12).

The peer check is tested with a real process of another uid (`setpriv --reuid=65534`, when this
test runs as root) connecting to the real `SocketServer`: the folder's mode already keeps such a
process out, so for this test only the listener sits in a folder it can reach.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.lsp_client import LspSession
from tests.support.user_daemon import DaemonEnv

from kbls.daemon.host import SharedDaemon
from kbls.userdaemon import paths
from kbls.userdaemon.listener import SocketServer, bind_socket, peer_allowed, peer_credentials

NOBODY = 65534


def test_a_live_daemon_listens_on_a_0600_socket_in_a_0700_folder(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nalpha text\n", encoding="utf-8")
    with LspSession([root], tmp_path, env=daemon_env.env, daemon=True):
        [sock] = daemon_env.sockets()
        assert stat.S_ISSOCK(sock.lstat().st_mode)
        assert stat.S_IMODE(sock.lstat().st_mode) == 0o600
        assert stat.S_IMODE(daemon_env.folder.lstat().st_mode) == 0o700
        assert daemon_env.folder.lstat().st_uid == os.getuid()


def test_the_runtime_folder_is_made_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    folder = paths.runtime_folder()
    assert folder == tmp_path / "kbls"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_without_xdg_runtime_dir_a_private_temp_folder_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = paths.runtime_folder()
    assert folder == tmp_path / f"kbls-{os.getuid()}"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_relative_xdg_runtime_dir_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The XDG spec calls a relative path invalid. Taken as given it names another folder in the
    daemon (started in `/`) than in the relay that started it (the editor's folder): the relay
    then waited a minute for a socket bound elsewhere."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", "run")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    assert paths.runtime_folder() == tmp_path / "tmp" / f"kbls-{os.getuid()}"


@pytest.mark.parametrize("mode", [0o755, 0o770, 0o701])
def test_a_runtime_folder_open_to_others_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    (tmp_path / "kbls").mkdir()
    os.chmod(tmp_path / "kbls", mode)
    with pytest.raises(paths.RuntimeDirError, match="open to other users"):
        paths.runtime_folder()


def test_a_symlinked_runtime_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    runtime = tmp_path / "run"
    runtime.mkdir()
    (runtime / "kbls").symlink_to(elsewhere)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    with pytest.raises(paths.RuntimeDirError, match="not a folder"):
        paths.runtime_folder()


@pytest.mark.skipif(os.getuid() != 0, reason="chown to another uid needs root")
def test_a_runtime_folder_of_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    (tmp_path / "kbls").mkdir(mode=0o700)
    os.chown(tmp_path / "kbls", NOBODY, NOBODY)
    with pytest.raises(paths.RuntimeDirError, match="belongs to uid"):
        paths.runtime_folder()


def test_a_socket_path_too_long_for_the_kernel_is_refused(tmp_path: Path) -> None:
    deep = tmp_path / ("x" * 120)
    deep.mkdir(mode=0o700)
    with pytest.raises(paths.RuntimeDirError, match="longer than"):
        paths.daemon_paths(deep)


def test_kbls_no_daemon_turns_the_daemon_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBLS_NO_DAEMON", "1")
    assert paths.daemon_disabled()
    monkeypatch.setenv("KBLS_NO_DAEMON", "0")
    assert not paths.daemon_disabled()


def test_peer_credentials_name_our_own_uid() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX)
    with ours, theirs:
        pid, uid, _ = peer_credentials(ours)
        assert (pid, uid) == (os.getpid(), os.getuid())
        assert peer_allowed(ours)


@pytest.fixture
def open_listener() -> Iterator[tuple[Path, SocketServer]]:
    """The real `SocketServer` on a socket any uid can reach (0777 folder, 0666 socket)."""
    folder = Path(tempfile.mkdtemp(prefix="kbls-peer-", dir="/tmp"))
    os.chmod(folder, 0o777)
    path = folder / "daemon.sock"
    sock = bind_socket(path)
    os.chmod(path, 0o666)
    server = SocketServer(SharedDaemon(watch=False), sock, idle_seconds=600)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(server.serve(),), daemon=True)
    thread.start()
    try:
        yield path, server
    finally:
        while thread.is_alive():  # serve() may not have started yet: ask until it has stopped
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(server.stop)
            thread.join(0.2)
        shutil.rmtree(folder, ignore_errors=True)


CLIENT = """
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}).encode()
s.settimeout(20)
data = b""
try:
    s.sendall(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
        if b"capabilities" in data:
            break
except (ConnectionResetError, BrokenPipeError, socket.timeout):
    pass
print("ANSWERED" if b"capabilities" in data else "REFUSED")
"""


@pytest.mark.skipif(os.getuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_a_peer_of_another_uid_is_refused(open_listener: tuple[Path, SocketServer]) -> None:
    path, server = open_listener
    other = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-c", CLIENT, str(path)],
        capture_output=True, text=True, timeout=60,
    )
    assert other.stdout.strip() == "REFUSED", other.stderr
    assert server.clients == 0
    # The same client under our own uid is answered: the refusal was the uid, not the client.
    ours = subprocess.run([sys.executable, "-c", CLIENT, str(path)], capture_output=True, text=True, timeout=60)
    assert ours.stdout.strip() == "ANSWERED", ours.stderr
