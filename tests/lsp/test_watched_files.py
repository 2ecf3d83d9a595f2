"""`workspace/didChangeWatchedFiles`: the editor's file events index where the daemon does not watch.

A client that can register the notification dynamically is asked for every file of its folders;
the events go to each root's watcher, batched with the daemon's own events. With the daemon's
watchers off (`KBLS_NO_WATCH=1`, as where inotify watches run out) a note written, edited,
deleted or moved in by another program is indexed because the client said so, and a refused
root whose config is fixed opens. With both on, a change both report is embedded once.
Real `kbls serve` over stdio, standalone and through the per-user daemon.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from lsprotocol import types
from tests.support.corpus import write, write_config
from tests.support.lsp_client import LspSession, plain
from tests.support.user_daemon import DaemonEnv
from tests.userdaemon.conftest import daemon_env  # noqa: F401  (the per-user daemon fixture)

from kbls.config import CONFIG_FILE
from kbls.daemon.watch import NO_WATCH_ENV

TIDES = "# Tides\n\nThe moon pulls the sea into two bulges that sweep around the planet.\n"
KELP = "# Kelp\n\nGiant kelp forests shelter sea otters, urchins and rockfish.\n"
#: longer than the debounce and a batch: an event the daemon would have taken is indexed by then.
QUIET = 2.0


def _tell(session: LspSession, path: Path, kind: types.FileChangeType) -> None:
    """The client's report that `path` was created, changed or deleted."""
    change = types.FileEvent(uri=path.as_uri(), type=kind)
    session.notify(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, types.DidChangeWatchedFilesParams(changes=[change]))


def _found(session: LspSession, query: str, path: str) -> bool:
    return path in session.paths_found(query, mode="lexical")


def _gone(session: LspSession, query: str, path: str) -> bool:
    return not _found(session, query, path)


def _env(users: DaemonEnv, through_daemon: bool) -> dict[str, str]:
    base = users.env if through_daemon else dict(os.environ)
    return dict(base, **{NO_WATCH_ENV: "1"})


@pytest.mark.parametrize("through_daemon", [False, True], ids=["standalone", "per-user-daemon"])
def test_the_clients_file_events_index_when_the_daemon_does_not_watch(
    tmp_path: Path, daemon_env: DaemonEnv, through_daemon: bool  # noqa: F811  (the fixture)
) -> None:
    root = tmp_path / "notes"
    write(root, "tides.md", TIDES)
    write_config(root)
    env = _env(daemon_env, through_daemon)
    with LspSession([root], tmp_path, env=env, daemon=through_daemon, watched_files=True) as session:
        session.wait_ready()
        registered = [(r.method, plain(r.register_options)) for r in session.registrations]
        assert registered == [(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, {"watchers": [{"globPattern": "**/*"}]})]

        # Written by another program: not indexed while nobody says so (the daemon does not watch).
        kelp = write(root, "sea/kelp.md", KELP)
        time.sleep(QUIET)
        assert _gone(session, "kelp otters urchins", "sea/kelp.md")
        _tell(session, kelp, types.FileChangeType.Created)
        session.wait_for(lambda: _found(session, "kelp otters urchins", "sea/kelp.md"), timeout=60, what="the new note")

        # Edited, then deleted.
        kelp.write_text("# Kelp\n\nSea otters crack urchins on their bellies with stones.\n", encoding="utf-8")
        _tell(session, kelp, types.FileChangeType.Changed)
        session.wait_for(lambda: _found(session, "bellies stones", "sea/kelp.md"), timeout=60, what="the edit")
        assert _gone(session, "forests rockfish", "sea/kelp.md")
        kelp.unlink()
        _tell(session, kelp, types.FileChangeType.Deleted)
        session.wait_for(lambda: _gone(session, "bellies stones", "sea/kelp.md"), timeout=60, what="the deletion")

        # A folder moved in and out: the client names the folder alone, the daemon rescans.
        outside = write(tmp_path / "elsewhere", "reef/coral.md", "# Coral\n\nPolyps build the reef from lime.\n")
        shutil.move(str(outside.parent), str(root / "reef"))
        _tell(session, root / "reef", types.FileChangeType.Created)
        session.wait_for(lambda: _found(session, "polyps lime", "reef/coral.md"), timeout=60, what="the moved folder")
        shutil.rmtree(root / "reef")
        _tell(session, root / "reef", types.FileChangeType.Deleted)
        session.wait_for(lambda: _gone(session, "polyps lime", "reef/coral.md"), timeout=60, what="the folder gone")


def test_a_refused_root_opens_when_the_client_reports_its_fixed_config(tmp_path: Path) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    write(good, "tides.md", TIDES)
    write_config(good)
    write(bad, "kelp.md", KELP)
    (bad / CONFIG_FILE).write_text("store: sub/store\n")  # inside the root: refused
    env = dict(os.environ, **{NO_WATCH_ENV: "1"})
    with LspSession([good, bad], tmp_path, env=env, watched_files=True) as session:

        def refused() -> bool:
            return any(r.uri == bad.as_uri() and r.error for r in session.status().roots)

        session.wait_for(refused, timeout=90, what="the bad root listed as refused")
        write_config(bad)
        time.sleep(QUIET)
        assert refused() and _gone(session, "kelp otters urchins", "kelp.md")  # no watcher of its own
        _tell(session, bad / CONFIG_FILE, types.FileChangeType.Changed)
        session.wait_for(lambda: _found(session, "kelp otters urchins", "kelp.md"), timeout=90, what="the root open")
        assert not refused()


def test_a_change_seen_by_the_daemon_and_reported_by_the_client_is_embedded_once(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    write(root, "tides.md", TIDES)
    write_config(root)
    with LspSession([root], tmp_path, watched_files=True) as session:
        before = session.wait_ready()
        kelp = write(root, "kelp.md", KELP)
        _tell(session, kelp, types.FileChangeType.Created)
        session.wait_for(lambda: _found(session, "kelp otters urchins", "kelp.md"), timeout=60, what="the new note")
        time.sleep(QUIET)  # the later of the two reports, if they came apart, has been handled too
        after = session.wait_ready()
        added = after.roots[0].chunks - before.roots[0].chunks
        assert added >= 1
        assert after.embedded_since_start - before.embedded_since_start == added, (before, after)
