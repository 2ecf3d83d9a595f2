"""Five editor clients (real pygls clients over stdio through `kbls serve`) on one per-user daemon.

Issue 12: one daemon process and one model load for all of them, each client's hits confined to
its own roots while clients of one folder share its engine (a saved chunk is embedded once), and
a daemon killed mid-search costs no client its search: every relay reconnects and the next
search answers.
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import time
from pathlib import Path

from lsprotocol import types
from tests.support.corpus import make_workspace
from tests.support.lsp_client import LspSession
from tests.support.user_daemon import DaemonEnv, daemon_pids

from kbls.userdaemon.spawn import wait_gone

MODEL_LOADED = "kbls.daemon.worker: model "


def _open(folders: list[Path], tmp: Path, env: DaemonEnv, name: str) -> LspSession:
    return LspSession(folders, tmp, env=env.env, name=name, daemon=True, log_level="INFO")


def _wait_for_hits(session: LspSession, query: str) -> None:
    session.wait_for(lambda: session.paths_found(query), what=f"hits for {query!r}")


def test_five_clients_share_one_daemon_and_see_only_their_roots(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    alpha = make_workspace(tmp_path, "alpha")
    beta = make_workspace(tmp_path, "beta")
    plan = [([alpha], "a1"), ([alpha], "a2"), ([alpha], "a3"), ([beta], "b1"), ([beta], "b2")]
    # All five start at once: the relays race to start the daemon; the spawn lock lets one win.
    with concurrent.futures.ThreadPoolExecutor(5) as pool:
        sessions = list(pool.map(lambda p: _open(p[0], tmp_path, daemon_env, p[1]), plan))
    try:
        for session in sessions:
            session.wait_ready()
        runtime = Path(daemon_env.env["XDG_RUNTIME_DIR"])
        assert len(daemon_pids(runtime)) == 1, daemon_pids(runtime)
        assert daemon_env.log().count(MODEL_LOADED) == 1, daemon_env.log()
        assert len(daemon_env.sockets()) == 1

        for session, (folders, name) in zip(sessions, plan, strict=True):
            hits = session.search("rust ownership borrowing", limit=20).hits
            assert hits, name
            assert all(hit.uri.startswith(folders[0].as_uri() + "/") for hit in hits), (name, hits)
            status = session.status()
            assert [Path(r.uri.removeprefix("file://")) for r in status.roots] == folders, name

        # One save seen by three windows of alpha (and its watcher): embedded once.
        a1, a2, a3, b1, _ = sessions
        before = a1.status().embedded_since_start
        note = alpha / "shared-save.md"
        note.write_text("# Zanzibar ledger\n\nThe quokkaphone ledger lists every zanzibar shipment.\n", encoding="utf-8")
        for session in (a1, a2, a3):
            session.client.text_document_did_save(
                types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=note.as_uri()))
            )
        a1.wait_for(lambda: "shared-save.md" in a1.paths_found("quokkaphone ledger"), what="the saved note")
        a1.wait_ready()
        time.sleep(1.0)  # a late duplicate job would run now
        a1.wait_ready()
        assert a1.status().embedded_since_start - before == 1
        assert "shared-save.md" in a3.paths_found("quokkaphone ledger")
        assert "shared-save.md" not in b1.paths_found("quokkaphone ledger")
    finally:
        for session in sessions:
            session.close()


def test_a_daemon_killed_mid_search_costs_no_client_its_search(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    alpha = make_workspace(tmp_path, "alpha")
    beta = make_workspace(tmp_path, "beta")
    sessions = [_open([alpha if i < 3 else beta], tmp_path, daemon_env, f"c{i}") for i in range(5)]
    try:
        for session in sessions:
            session.wait_ready()
        runtime = Path(daemon_env.env["XDG_RUNTIME_DIR"])
        [first] = daemon_pids(runtime)
        in_flight = [s.send("kb/search", {"query": f"rust ownership {i}", "limit": 10}) for i in range(4) for s in sessions]
        os.kill(first, signal.SIGKILL)
        assert wait_gone(first, 10)
        for future in in_flight:  # answered, or failed with RequestFailed: none hangs
            try:
                future.result(timeout=60)
            except Exception as exc:
                assert "try again" in str(exc) or "daemon" in str(exc), exc
        for session in sessions:
            result = session.request("kb/search", {"query": "rust ownership", "limit": 5})
            assert "hits" in result
        for session in sessions:
            assert session.alive()
            _wait_for_hits(session, "rust ownership")
        pids = daemon_pids(runtime)
        assert len(pids) == 1 and pids[0] != first, pids
    finally:
        for session in sessions:
            session.close()


def _answers(session: LspSession) -> bool:
    """A search is answered (a request lost with its daemon fails with "try again": not yet)."""
    try:
        return "hits" in session.request("kb/search", {"query": "rust"})
    except Exception as exc:  # the relay's RequestFailed for a request the dead daemon held
        assert "try again" in str(exc), exc
        return False


def _children(pid: int) -> list[str]:
    """Command lines of the direct children of `pid`."""
    out = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "stat").read_text().split(") ")[1].split()[1] == str(pid):
                out.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, IndexError):
            continue
    return out


def test_a_relay_whose_daemon_keeps_dying_falls_back_to_a_standalone_server(
    tmp_path: Path, daemon_env: DaemonEnv
) -> None:
    alpha = make_workspace(tmp_path, "alpha")
    with _open([alpha], tmp_path, daemon_env, "flappy") as session:
        session.wait_ready()
        runtime = Path(daemon_env.env["XDG_RUNTIME_DIR"])
        for _ in range(3):  # three losses within 30 s: the relay stops trying the daemon
            [pid] = session.wait_for(lambda: daemon_pids(runtime), what="a daemon")
            os.kill(pid, signal.SIGKILL)
            assert wait_gone(pid, 10)
            session.wait_for(lambda: _answers(session), what="an answer")
        assert session.process is not None
        relay = session.process.pid
        session.wait_for(lambda: any("--standalone" in c for c in _children(relay)), what="a standalone child")
        _wait_for_hits(session, "rust ownership")
        assert daemon_pids(runtime) == []
        assert "kbls serve --standalone" in session.log_file.read_text()
