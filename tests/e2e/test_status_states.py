"""The index state a client is told is never `ready` before a root's first scan, and every
progress a client saw begin also ends: over the real `kbls serve` and the per-user daemon.

An editor re-runs its query when the state becomes `ready`: a false `ready` with nothing indexed
left pickers empty for good, and a `$/progress` begin without its end left VS Code's status bar
at "indexing 0%" (issue 14, reported through the per-user daemon's relay).
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

from lsprotocol import types
from tests.support.corpus import make_workspace
from tests.support.lsp_client import LspSession
from tests.support.user_daemon import DaemonEnv
from tests.userdaemon.conftest import daemon_env  # noqa: F401  (the per-user daemon fixture)

QUERY = "rust ownership borrowing"
#: seconds a client keeps asking after adding a folder (its open and first scan take less).
POLL_SECONDS = 20.0


def _through_daemon(folders: list[Path], tmp: Path, env: DaemonEnv, name: str) -> LspSession:
    return LspSession(folders, tmp, env=env.env, name=name, daemon=True, log_level="INFO")


def _add_folder(session: LspSession, folder: Path) -> None:
    event = types.WorkspaceFoldersChangeEvent(
        added=[types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)], removed=[]
    )
    session.notify(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, types.DidChangeWorkspaceFoldersParams(event=event))


def _files_of(status: dict[str, Any], folder: Path) -> int | None:
    """The files `kb/status` counts for `folder`'s root; None while it is not open."""
    for root in status["roots"]:
        if root["uri"] == folder.as_uri():
            return int(root["files"])
    return None


def _poll_until_found(session: LspSession, folder: Path) -> list[str]:
    """Ask kb/search and kb/status as fast as possible until `folder`'s notes are found; every
    `ready` answered before then is a false one (returned, described)."""
    false_ready: list[str] = []
    deadline = time.monotonic() + POLL_SECONDS
    while time.monotonic() < deadline:
        search = session.request("kb/search", {"query": QUERY, "limit": 20})
        found = [hit for hit in search["hits"] if hit["uri"].startswith(folder.as_uri() + "/")]
        if found:
            return false_ready
        if search["index"]["state"] == "ready":
            false_ready.append(f"kb/search: ready with no hit in {folder.name}: {search['index']}")
        status = session.request("kb/status", {})
        if status["state"] == "ready" and not _files_of(status, folder):
            false_ready.append(f"kb/status: ready, {folder.name} has {_files_of(status, folder)} files")
    raise AssertionError(f"{folder.name}'s notes were never found\n{session.log_tail()}")


def _ready_statuses_without(session: LspSession, folder_files: int, since: int) -> list[dict[str, Any]]:
    """`kb/indexStatus` notifications after the `since`-th saying ready with fewer files than indexed."""
    return [s for s in session.statuses()[since:] if s["state"] == "ready" and s["files"] < folder_files]


def test_a_folder_added_later_is_not_ready_before_its_first_scan(tmp_path: Path) -> None:
    alpha = make_workspace(tmp_path, "alpha")
    beta = make_workspace(tmp_path, "beta")
    with LspSession([alpha], tmp_path) as session:
        ready = session.wait_ready()
        alpha_files = ready.roots[0].files
        since = len(session.statuses())
        _add_folder(session, beta)
        false_ready = _poll_until_found(session, beta)
        status = session.wait_ready()
        assert false_ready == [], false_ready
        total = sum(root.files for root in status.roots)
        assert total > alpha_files
        assert _ready_statuses_without(session, total, since) == [], session.statuses()[since:]


def test_a_new_client_of_the_user_daemon_is_not_ready_before_its_folder_is_scanned(
    tmp_path: Path, daemon_env: DaemonEnv  # noqa: F811  (the fixture imported above)
) -> None:
    alpha = make_workspace(tmp_path, "alpha")
    beta = make_workspace(tmp_path, "beta")
    first = _through_daemon([alpha], tmp_path, daemon_env, "alpha")
    try:
        first.wait_ready()  # the daemon's model is loaded: beta's client starts on a warm daemon
        second = _through_daemon([beta], tmp_path, daemon_env, "beta")
        try:
            false_ready = _poll_until_found(second, beta)
            assert false_ready == [], false_ready
            status = second.wait_ready()
            files = next((root.files for root in status.roots if root.uri == beta.as_uri()), 0)
            assert files, status
            assert _ready_statuses_without(second, files, 0) == [], second.statuses()
        finally:
            second.close()
    finally:
        first.close()


def _progress_by_token(session: LspSession) -> dict[str, list[str]]:
    """Each created token's progress kinds in order ("create", "begin", "report", "end")."""
    kinds: dict[str, list[str]] = {}
    current: list[str] | None = None
    for kind, value in list(session.progress):
        if kind == "create":
            current = kinds.setdefault(str(value["token"]), ["create"])
        elif current is not None:
            current.append(kind)
    return kinds


def _begun_and_ended(session: LspSession) -> bool:
    """Every progress this client saw begin has ended (the client's log keeps tokens in order)."""
    with_begin = 0
    ended = 0
    for kind, _ in list(session.progress):
        with_begin += kind == "begin"
        ended += kind == "end"
    return with_begin == ended


def _settled(session: LspSession) -> bool:
    statuses = session.statuses()
    return _begun_and_ended(session) and bool(statuses) and statuses[-1]["state"] == "ready"


def _ended_since(session: LspSession, before: int) -> bool:
    """A progress ended after the `before`-th progress event, and the client has settled."""
    return any(kind == "end" for kind, _ in session.progress[before:]) and _settled(session)


def test_every_client_of_the_user_daemon_sees_each_progress_end_and_the_ready_state(
    tmp_path: Path, daemon_env: DaemonEnv  # noqa: F811  (the fixture imported above)
) -> None:
    alpha = make_workspace(tmp_path, "alpha")
    first = _through_daemon([alpha], tmp_path, daemon_env, "first")
    try:
        first.wait_ready()
        first.wait_for(lambda: _settled(first), 30, "the first client's progress to end")
    finally:
        first.close()
    # The folder is indexed: each reconnect opens it again and its scan finds nothing to do, so
    # its progress ends within milliseconds of its begin (the end once overtook the begin's token).
    for attempt in range(4):
        clients = [_through_daemon([alpha], tmp_path, daemon_env, f"again-{attempt}-{n}") for n in range(2)]
        try:
            for client in clients:
                client.wait_ready()
                client.wait_for(
                    partial(_settled, client), 30, f"attempt {attempt}: every begin ended and ready was said"
                )
            # A reindex while both are connected: both see it begin and end, and ready after it.
            seen = [len(c.progress) for c in clients]
            assert clients[0].request("kb/reindex", {})["queued"] > 0
            for client, before in zip(clients, seen, strict=True):
                client.wait_for(
                    partial(_ended_since, client, before), 30, f"attempt {attempt}: the reindex's progress ended"
                )
                assert all(kinds[-1] == "end" for kinds in _progress_by_token(client).values() if "begin" in kinds)
        finally:
            for client in clients:
                client.close()
