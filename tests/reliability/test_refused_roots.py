"""Issue 14 follow-up: a root whose `.kbls.yaml` is refused shows in `kb/status` and opens once fixed.

A root whose config is an error (a store inside, at or above the root; the store of another
root) used to get one `window/showMessage` and then nothing: `kb/status` did not list it, the
state read `ready`, and fixing the file did nothing until the editor restarted (no watcher
watches a root that never opened). Now the root is listed with its `error`, the state is
`error` while it is refused, and saving a fixed `.kbls.yaml` opens it: its notes become
searchable with no restart, and the user is shown the refusal once, not at every retry.
Real daemon over stdio, standalone and through the per-user daemon.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from tests.support.corpus import store_of, write_config
from tests.support.lsp_client import LspSession
from tests.support.user_daemon import DaemonEnv
from tests.userdaemon.conftest import daemon_env  # noqa: F401  (the per-user daemon fixture)

from kbls.config import CONFIG_FILE
from kbls.protocol import wire

INSIDE = "is inside the workspace root"


def _note(root: Path, name: str, text: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text, encoding="utf-8")


def _root(status: wire.StatusResult, folder: Path) -> wire.RootStatus | None:
    return next((r for r in status.roots if r.uri == folder.as_uri()), None)


def _refused(session: LspSession, folder: Path, words: str) -> wire.StatusResult:
    """The first `kb/status` that lists `folder` with an error holding `words`."""

    def listed() -> wire.StatusResult | None:
        status = session.status()
        root = _root(status, folder)
        return status if root is not None and root.error and words in root.error else None

    return session.wait_for(listed, timeout=90, what=f"{folder} listed as refused ({words})")


def _shown_about(session: LspSession, folder: Path) -> list[str]:
    return [m for m in session.shown() if str(folder) in m and ("store" in m or CONFIG_FILE in m)]


def _opened(session: LspSession, folder: Path, query: str) -> wire.StatusResult:
    """`kb/status` once `folder` is open, indexed and error-free and the state is `ready`."""

    def ready() -> wire.StatusResult | None:
        status = session.status()
        root = _root(status, folder)
        done = status.state == "ready" and status.queue == 0 and root is not None and root.files > 0
        return status if done and root is not None and root.error is None else None

    status = session.wait_for(ready, timeout=120, what=f"{folder} to open once its config is fixed")
    assert session.wait_for(lambda: session.paths_found(query, mode="lexical"), timeout=30, what="its notes")
    return status


def _indexed(session: LspSession, folder: Path) -> wire.StatusResult | None:
    status = session.status()
    root = _root(status, folder)
    return status if status.queue == 0 and root is not None and root.files > 0 else None


def _change_folders(session: LspSession, added: tuple[Path, ...] = (), removed: tuple[Path, ...] = ()) -> None:
    """Tell the server workspace folders were added or removed (`workspace/didChangeWorkspaceFolders`)."""

    def folders(paths: tuple[Path, ...]) -> list[types.WorkspaceFolder]:
        return [types.WorkspaceFolder(uri=p.as_uri(), name=p.name) for p in paths]

    event = types.WorkspaceFoldersChangeEvent(added=folders(added), removed=folders(removed))
    session.notify(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, types.DidChangeWorkspaceFoldersParams(event=event))


def _without(session: LspSession, folder: Path) -> wire.StatusResult | None:
    status = session.status()
    return status if _root(status, folder) is None and status.state == "ready" and status.queue == 0 else None


def _log(session: LspSession, env: DaemonEnv | None) -> str:
    """What the daemon serving `session` logged (the per-user daemon's log, or the session's)."""
    if env is not None:
        return env.log()
    try:
        return session.log_file.read_text(errors="replace")
    except OSError:
        return ""


@pytest.mark.parametrize("through_daemon", [False, True], ids=["standalone", "per-user-daemon"])
def test_a_refused_root_is_listed_with_its_error_and_opens_once_its_config_is_fixed(
    tmp_path: Path, daemon_env: DaemonEnv, through_daemon: bool  # noqa: F811  (the fixture)
) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    _note(good, "tides.md", "# Tides\n\nThe moon pulls the sea into two bulges.\n")
    _note(bad, "kelp.md", "# Kelp\n\nGiant kelp forests shelter sea otters and urchins.\n")
    write_config(good)
    (bad / CONFIG_FILE).write_text("store: sub/store\n")
    env = daemon_env.env if through_daemon else None
    logs = daemon_env if through_daemon else None
    with LspSession([good, bad], tmp_path, env=env, daemon=through_daemon, name="kbls-refused") as session:
        status = _refused(session, bad, INSIDE)
        refused = _root(status, bad)
        assert refused is not None and refused.error is not None
        assert "store: sub/store" in refused.error and refused.files == 0 and refused.store == "", refused
        # The other root is served meanwhile; the state says something needs fixing.
        status = session.wait_for(lambda: _indexed(session, good), timeout=120, what="the good root to be indexed")
        assert status.state == "error" and status.error is not None and str(bad) in status.error, status
        assert INSIDE in status.error, status.error
        assert session.paths_found("moon sea bulges", mode="lexical") == ["tides.md"]
        assert session.paths_found("kelp otters urchins", mode="lexical") == []

        # Saved again, still wrong: tried again (the log says so), not shown again.
        tries = _log(session, logs).count(f"cannot open {bad}")
        assert tries >= 1, _log(session, logs)[-2000:]
        (bad / CONFIG_FILE).write_text("store: sub/store\n# still wrong\n")
        session.wait_for(
            lambda: _log(session, logs).count(f"cannot open {bad}") > tries, timeout=60,
            what="the saved config to be tried again",
        )
        assert _root(session.status(), bad) is not None

        # Fixed: the root opens with no restart, its notes are found, the state is ready again.
        write_config(bad)
        status = _opened(session, bad, "kelp otters urchins")
        assert status.error is None and {r.uri for r in status.roots} == {good.as_uri(), bad.as_uri()}
        assert Path(_root(status, bad).store) == store_of(bad)  # type: ignore[union-attr]  # asserted open above
        assert session.paths_found("kelp otters urchins", mode="lexical") == ["kelp.md"]
        shown = _shown_about(session, bad)
        assert len(shown) == 1 and "store: sub/store" in shown[0], shown
    assert not (bad / "sub").exists()  # nothing was created inside the root


def test_the_second_root_on_one_store_is_listed_and_opens_once_it_names_its_own(tmp_path: Path) -> None:
    """Two roots naming one `store:`: the second is refused (its error names the first), and
    opens when its `.kbls.yaml` names a store of its own."""
    shared = tmp_path / "shared-store"
    first, second = tmp_path / "first", tmp_path / "second"
    _note(first, "n1.md", "# Aardvark\n\nNotes about the aardvark.\n")
    _note(second, "n1.md", "# Bandicoot\n\nNotes about the bandicoot.\n")
    write_config(first, store=str(shared))
    with LspSession([first], tmp_path, name="kbls-first") as session:  # the store is first's
        session.wait_ready()
    write_config(second, store=str(shared))
    with LspSession([first, second], tmp_path, name="kbls-two") as session:
        status = _refused(session, second, str(first))
        assert "`store:`" in (_root(status, second).error or ""), status  # type: ignore[union-attr]
        assert session.wait_for(lambda: session.paths_found("aardvark", mode="lexical"), timeout=90) == ["n1.md"]
        assert session.status().state == "error"
        # The folder removed from the workspace: no longer listed, nothing left in error.
        _change_folders(session, removed=(second,))
        status = session.wait_for(lambda: _without(session, second), timeout=60, what="the refused folder to go")
        assert [r.uri for r in status.roots] == [first.as_uri()] and status.error is None
        # Added again: refused again (a new episode, shown again), and fixed: opened.
        _change_folders(session, added=(second,))
        _refused(session, second, str(first))
        write_config(second)  # its own store, beside it
        _opened(session, second, "bandicoot")
        for word, root in (("bandicoot", second), ("aardvark", first)):  # each root's own notes
            assert [(h.root, h.path) for h in session.search(word, mode="lexical").hits] == [(root.as_uri(), "n1.md")]
        assert len(_shown_about(session, second)) == 2, session.shown()


def test_an_open_root_whose_new_config_is_refused_says_so_until_it_is_fixed(tmp_path: Path) -> None:
    """A config edited to a refused store: the root goes on with its previous store and says
    why in `kb/status`; the state is `error` until the file is fixed, then `ready` again."""
    root = tmp_path / "notes"
    _note(root, "tides.md", "# Tides\n\nThe moon pulls the sea into two bulges.\n")
    store = write_config(root)
    with LspSession([root], tmp_path) as session:
        session.wait_ready()
        (root / CONFIG_FILE).write_text("store: .kbls-store\n")
        status = _refused(session, root, INSIDE)
        listed = _root(status, root)
        assert listed is not None and listed.error is not None and "previous settings" in listed.error, listed
        assert [r.uri for r in status.roots] == [root.as_uri()] and Path(listed.store) == store and listed.files == 1
        assert status.state == "error"
        assert session.paths_found("moon sea bulges", mode="lexical") == ["tides.md"]
        write_config(root)
        status = _opened(session, root, "moon sea bulges")
        assert [Path(r.store) for r in status.roots] == [store]
        assert len(_shown_about(session, root)) == 1, session.shown()
    assert not (root / ".kbls-store").exists()


def test_an_invalid_config_is_listed_while_the_defaults_serve_the_root_until_it_is_fixed(tmp_path: Path) -> None:
    """Invalid YAML in `.kbls.yaml`: configs are forgiving, so the root is served with the
    defaults, but `kb/status` says so (the state is `error`: the user's settings, say an
    `exclude`, are not in effect) until the file is fixed; shown once, also when saved again
    unchanged (a save that moves the error shows the new message)."""
    root = tmp_path / "notes"
    _note(root, "tides.md", "# Tides\n\nThe moon pulls the sea into two bulges.\n")
    (root / CONFIG_FILE).write_text("search: [unclosed\n")
    with LspSession([root], tmp_path) as session:
        status = _refused(session, root, "not valid YAML")
        assert status.state == "error" and "default settings" in (status.error or ""), status
        assert session.wait_for(lambda: session.paths_found("moon sea bulges", mode="lexical"), timeout=90) == ["tides.md"]
        (root / CONFIG_FILE).write_text("search: [unclosed\n")  # saved again as it was
        session.wait_for(
            lambda: session.log_file.read_text(errors="replace").count("configuration changed") >= 1, timeout=60,
            what="the saved config to be read again",
        )
        _refused(session, root, "not valid YAML")
        store = write_config(root)
        status = _opened(session, root, "moon sea bulges")
        assert [Path(r.store) for r in status.roots] == [store]
        shown = [m for m in session.shown() if "not valid YAML" in m]
        assert len(shown) == 1 and str(root / CONFIG_FILE) in shown[0], session.shown()
