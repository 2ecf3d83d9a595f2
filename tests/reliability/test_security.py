"""Issue 6, "Security": nothing outside the workspace roots and the store is read, followed or
reported; no network connection; stdio by default and TCP on loopback only.

Each test here is cited in docs/security.md next to the guarantee it proves.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types
from tests.support.corpus import write_config
from tests.support.files import filesystem_uid
from tests.support.lsp_client import LspSession
from tests.support.processes import child_env
from tests.support.raw_stdio import frame, initialize_params, read_message
from tests.support.store_check import check_store

from kbls.engine import Engine
from kbls.errors import OutsideRootError
from kbls.indexing.embed import Embedder

SECRET = "# Secret\n\nthe launch code is swordfish\n"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """(root, outside): a root with every kind of way out, and a secret beside it."""
    root, outside = tmp_path / "notes", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text(SECRET)
    (root / "ok.md").write_text("# Fine\n\nan ordinary note about gardening\n")
    os.symlink(outside / "secret.md", root / "link-to-secret.md")
    os.symlink(outside, root / "linked-dir")
    os.symlink("../outside/secret.md", root / "relative-link.md")
    write_config(root)
    return root, outside


def _ways_out(root: Path) -> list[Path]:
    return [
        root / "link-to-secret.md", root / "linked-dir" / "secret.md", root / "relative-link.md",
        root / ".." / "outside" / "secret.md", root / "sub" / ".." / ".." / "outside" / "secret.md",
        root.parent / "outside" / "secret.md", Path("/etc/passwd"),
    ]


def _read_outside(engine: Engine) -> bool:
    return bool(engine.search("launch code swordfish", mode="lexical").hits)


def test_engine_never_reads_outside_the_root_by_walk_or_by_path(
    layout: tuple[Path, Path], tmp_path: Path, embedder: Embedder
) -> None:
    root, _ = layout
    engine = Engine(root, embedder=embedder)
    try:
        engine.index()
        report = engine.index(_ways_out(root))
        assert not _read_outside(engine)
        paths = set(check_store(engine.store_dir).chunks) | {e.path for e in engine.status().errors}
        assert paths <= {"ok.md", "link-to-secret.md", "relative-link.md", "linked-dir/secret.md"}, paths
        assert all("outside" in s.reason or "cannot" in s.reason for s in report.skipped), report.skipped
        for path in (root / ".." / "outside" / "secret.md", Path("/etc/passwd")):
            with pytest.raises(OutsideRootError):
                engine.related(path)
    finally:
        engine.close()


def test_daemon_refuses_uris_outside_its_roots(layout: tuple[Path, Path], tmp_path: Path) -> None:
    root, _ = layout
    daemon = LspSession([root], tmp_path)
    try:
        daemon.wait_ready()
        for path in _ways_out(root):
            uri = path.as_uri() if path.is_absolute() else path.resolve().as_uri()
            for method, params in (("kb/related", {"uri": uri}), ("kb/reindex", {"uris": [uri]})):
                try:
                    result = daemon.request(method, params)
                except Exception as exc:  # InvalidParams: refused, as documented
                    assert "outside" in str(exc) or "invalid" in str(exc).lower(), exc
                else:
                    assert not result.get("hits"), (method, path, result)
            daemon.client.text_document_did_save(
                types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            daemon.request("kb/status", {})
        time.sleep(1.0)
        daemon.wait_ready()
        assert not daemon.search("launch code swordfish", mode="lexical").hits, "read a file outside the root"
        status = daemon.status()
        reported = {e.path for r in status.roots for e in r.errors}
        assert not any(p.startswith("..") or p.startswith("/") for p in reported), reported
    finally:
        daemon.close()


_NO_NETWORK = """
import os, socket, sys
def refuse(*args, **kwargs):
    sys.stderr.write("NETWORK-ATTEMPT %r\\n" % (args,))
    with open(os.environ["KBLS_NETWORK_LOG"], "a") as log:
        log.write("NETWORK-ATTEMPT %r\\n" % (args,))
    raise OSError("network disabled by the test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from kbls import cli
sys.exit(cli.main(sys.argv[1:]))
"""


def test_index_search_and_serve_make_no_network_connection(layout: tuple[Path, Path], tmp_path: Path) -> None:
    root, _ = layout
    script = tmp_path / "no_network.py"
    script.write_text(_NO_NETWORK)
    attempts = tmp_path / "network.log"
    env = child_env(tmp_path, HF_HUB_OFFLINE="0", KBLS_NETWORK_LOG=str(attempts))
    for args in (["index", "--root", str(root)], ["search", "gardening", "--root", str(root)]):
        proc = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert "NETWORK-ATTEMPT" not in proc.stderr, proc.stderr
    daemon = LspSession([root], tmp_path, env=env, command=[sys.executable, str(script), "serve"])
    try:
        daemon.wait_ready()
        assert daemon.search("gardening").hits
        daemon.request("kb/related", {"uri": (root / "ok.md").as_uri()})
    finally:
        daemon.close()
    assert not attempts.exists(), attempts.read_text()


def test_tcp_listener_binds_loopback_by_default(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kbls", "serve", "--tcp", str(port)], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, env=child_env(tmp_path),
    )
    try:
        deadline = time.monotonic() + 30
        listening: list[str] = []
        while time.monotonic() < deadline and not listening:
            listening = [line for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
                         if line.split()[1].endswith(f":{port:04X}") and line.split()[3] == "0A"]
            listening += [line for line in Path("/proc/net/tcp6").read_text().splitlines()[1:]
                          if line.split()[1].endswith(f":{port:04X}") and line.split()[3] == "0A"]
            time.sleep(0.2)
        assert listening, "kbls serve --tcp PORT is not listening"
        for line in listening:
            address = line.split()[1].split(":")[0]
            assert address in ("0100007F", "00000000000000000000000001000000"), f"bound to {address}, not loopback"
    finally:
        proc.kill()
        proc.wait()


def test_tcp_serves_this_user_only(tmp_path: Path) -> None:
    """A loopback port is open to every local user: a connection whose socket another uid owns is
    closed unread; this user's is served."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kbls", "serve", "--tcp", str(port), "--log-file", str(tmp_path / "tcp.log")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child_env(tmp_path),
    )
    initialize = frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params(None)})
    try:
        deadline = time.monotonic() + 30
        while True:
            with filesystem_uid(65534):  # the socket is made as another user (its inode's uid)
                other = socket.socket()
            try:
                other.connect(("127.0.0.1", port))
                break
            except OSError:
                other.close()
                assert time.monotonic() < deadline, "kbls serve --tcp is not listening"
                time.sleep(0.1)
        with other:
            other.settimeout(30)
            try:
                other.sendall(initialize)
                answered = other.recv(1024)
            except ConnectionResetError:  # closed with the bytes unread
                answered = b""
            assert answered == b"" or os.geteuid() != 0  # closed, nothing answered (as root: another uid)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as mine, mine.makefile("rb") as replies:
            mine.sendall(initialize)
            answer = read_message(replies)
            assert answer is not None and answer.get("id") == 1 and "capabilities" in answer["result"]
        assert "refused a TCP connection" in (tmp_path / "tcp.log").read_text(encoding="utf-8") or os.geteuid() != 0
    finally:
        proc.kill()
        proc.wait()
