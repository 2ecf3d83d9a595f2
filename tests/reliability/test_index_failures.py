"""Issue 14: an index job that fails is retried, shown, and recovers; a store lost under the daemon is rebuilt.

Real daemon, real store. The store is made unwritable with `chattr +i` when running as root
(root ignores permission bits, and an immutable file refuses writes even through descriptors
SQLite already holds), else by removing write permission; the test is skipped with the reason
when neither makes a write fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from tests.support.corpus import make_workspace, store_of, write
from tests.support.lsp_client import LspSession

from kbls.protocol import wire

REQUEST_FAILED = -32803


def _writable(store: Path) -> bool:
    try:
        with open(store / "writer.lock", "ab") as handle:
            handle.write(b"")
            handle.flush()
        (store / "probe").touch()
        (store / "probe").unlink()
    except OSError:
        return False
    return True


def _lock_store(store: Path) -> Callable[[], None]:
    """Make the store folder and its files unwritable; returns the function that undoes it."""
    paths = [str(p) for p in store.iterdir() if p.is_file()] + [str(store)]
    if os.geteuid() == 0 and shutil.which("chattr"):
        proc = subprocess.run(["chattr", "+i", *paths], capture_output=True, text=True)
        if proc.returncode == 0:
            def unlock() -> None:
                subprocess.run(["chattr", "-i", *paths], capture_output=True, check=False)

            if not _writable(store):
                return unlock
            unlock()
        reason = proc.stderr.strip() or "chattr +i did not stop writes"
    else:
        for path in paths:
            os.chmod(path, 0o555 if path == str(store) else 0o444)

        def unlock() -> None:
            for path in paths:
                os.chmod(path, 0o755 if path == str(store) else 0o644)

        if not _writable(store):
            return unlock
        unlock()
        reason = "removing write permission did not stop writes"
    pytest.skip(f"cannot make the store unwritable here: {reason}")


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[LspSession, Path]]:
    notes = make_workspace(tmp_path)
    session = LspSession([notes], tmp_path)
    try:
        session.wait_ready()
        yield session, notes
    finally:
        session.close()


def _failure_messages(session: LspSession) -> list[str]:
    """The messages telling that indexing failed: an unwritable store says it cannot write the
    store and when indexing resumes (`daemon.notices`); any other failure says it failed."""
    return [m for m in session.shown() if "failed" in m or "cannot write the store" in m]


def test_an_unwritable_store_is_shown_once_retried_and_recovers_without_restart(
    daemon: tuple[LspSession, Path], request: pytest.FixtureRequest
) -> None:
    session, notes = daemon
    unlock = _lock_store(store_of(notes))
    request.addfinalizer(unlock)  # tmp_path cannot be removed while immutable
    note = write(notes, "cooking/focaccia.md", "# Focaccia\n\nDimple the dough with olive oil and rosemary.\n")
    session.save(note)

    def failing() -> wire.StatusResult | None:
        status = session.status()
        return status if status.state == "error" and status.roots[0].error else None

    status = session.wait_for(failing, timeout=60, what="kb/status to report the failure")
    assert status.error and str(notes) in status.error, status
    shown = session.wait_for(lambda: _failure_messages(session), timeout=30, what="one message")
    assert str(notes) in shown[0] and "indexing resumes once the store can be written again" in shown[0], shown
    # Searches still answer from what is indexed, saying why the index is behind.
    result = session.search("sourdough starter", mode="lexical")
    assert "cooking/sourdough.md" in [h.path for h in result.hits]
    assert result.index.state == "error" and result.index.error
    assert any(s["state"] == "error" and s["error"] for s in session.statuses())
    time.sleep(4)  # retries at 1 s and 2 s fail too: still one message
    assert len(_failure_messages(session)) == 1, session.shown()
    assert session.status().state == "error"
    assert session.paths_found("focaccia rosemary dimple", mode="lexical") == []

    unlock()  # the cause goes away: the queued save is indexed without a restart
    session.wait_for(
        lambda: session.paths_found("focaccia rosemary dimple", mode="lexical") == ["cooking/focaccia.md"],
        timeout=60, what="the retried save to be indexed",
    )
    status = session.wait_ready(timeout=60)
    assert status.error is None and status.roots[0].error is None and status.roots[0].files == 8
    assert any("again" in m for m in session.shown()), session.shown()


def _search_until(session: LspSession, stop: threading.Event, errors: list[BaseException]) -> None:
    """Search all along: an answer or a clear RequestFailed is fine, an InternalError is not."""
    while not stop.is_set():
        try:
            session.search("sourdough starter", mode="lexical")
        except JsonRpcException as exc:
            if isinstance(exc, JsonRpcInternalError) or exc.code != REQUEST_FAILED:
                errors.append(exc)
        except Exception as exc:  # timeouts: the daemon stopped answering
            errors.append(exc)
        time.sleep(0.05)


def _found(session: LspSession, query: str) -> list[str]:
    """Paths found; none while the store is being rebuilt (a clear RequestFailed)."""
    try:
        return session.paths_found(query, mode="lexical")
    except JsonRpcException as exc:
        assert exc.code == REQUEST_FAILED and "rebuilt" in str(exc), exc
        return []


@pytest.mark.parametrize("what", ["files", "folder"])
def test_a_store_deleted_under_the_daemon_is_rebuilt_and_the_save_kept(
    daemon: tuple[LspSession, Path], what: str
) -> None:
    session, notes = daemon
    store = store_of(notes)
    stop, errors = threading.Event(), list[BaseException]()
    searcher = threading.Thread(target=_search_until, args=(session, stop, errors), daemon=True)
    searcher.start()
    try:
        if what == "folder":
            # Gone at once, as a cleared cache is: removing it file by file raced the daemon,
            # which may start the new store in that folder before rmtree reaches its end.
            gone = store.with_name(store.name + "-gone")
            store.rename(gone)
            shutil.rmtree(gone)
        else:
            for name in ("kbls.sqlite3", "kbls.sqlite3-wal", "kbls.sqlite3-shm"):
                (store / name).unlink(missing_ok=True)
        note = write(notes, "cooking/focaccia.md", "# Focaccia\n\nDimple the dough with olive oil and rosemary.\n")
        session.save(note)
        session.wait_for(
            lambda: _found(session, "focaccia rosemary dimple") == ["cooking/focaccia.md"],
            timeout=90, what="the save to be indexed into the rebuilt store",
        )
        status = session.wait_ready(timeout=90)
    finally:
        stop.set()
        searcher.join(10)
    assert not errors, errors[:3]
    assert (store / "kbls.sqlite3").is_file()
    assert status.roots[0].files == 8 and status.state == "ready" and status.error is None
    assert "cooking/sourdough.md" in session.paths_found("sourdough starter", mode="lexical")
    assert any("deleted or replaced" in m for m in session.shown()), session.shown()


def test_two_roots_naming_one_store_are_refused_with_both_named(tmp_path: Path) -> None:
    first, second = make_workspace(tmp_path, "first"), make_workspace(tmp_path, "second")
    shared = tmp_path / "one-store"
    for root in (first, second):
        (root / ".kbls.yaml").write_text(f"store: {shared}\n", encoding="utf-8")
    write(second, "only-second.md", "# Only second\n\nA quokka lives only in the second root.\n")
    session = LspSession([first, second], tmp_path)
    try:
        session.wait_for(lambda: (s := session.status()).queue == 0 and s.roots and s.roots[0].files > 0, timeout=120,
                         what="the first root to be indexed")
        message = session.wait_for(
            lambda: [m for m in session.shown() if str(first) in m and str(second) in m], timeout=60,
            what="a message naming both roots",
        )
        assert "store" in message[0], message
        # The refused root is listed with that error, and the state is `error` (test_refused_roots.py).
        status = session.status()
        assert [r.uri for r in status.roots] == [first.as_uri(), second.as_uri()] and status.state == "error"
        assert status.roots[0].error is None and str(first) in (status.roots[1].error or ""), status.roots
        assert session.paths_found("quokka second root", mode="lexical") == []
    finally:
        session.close()


def test_a_lost_store_that_cannot_be_made_again_is_retried_until_it_can(tmp_path: Path) -> None:
    notes = make_workspace(tmp_path)
    parent = tmp_path / "stores"
    store = parent / "notes-store"
    (notes / ".kbls.yaml").write_text(f"store: {store}\n", encoding="utf-8")
    session = LspSession([notes], tmp_path)
    try:
        session.wait_ready()
        shutil.rmtree(store)
        unlock = _lock_store(parent)  # the store's folder cannot be created again
        try:
            note = write(notes, "cooking/focaccia.md", "# Focaccia\n\nDimple the dough with olive oil and rosemary.\n")
            session.save(note)

            def failing() -> wire.StatusResult | None:
                try:
                    status = session.status()
                except JsonRpcException:
                    return None
                return status if status.state == "error" and status.error else None

            status = session.wait_for(failing, timeout=60, what="the lost store to be reported")
            assert str(notes) in (status.error or ""), status
            assert any("deleted or replaced" in m for m in session.shown()), session.shown()
            time.sleep(3)  # retried meanwhile, and still failing
            assert not (store / "kbls.sqlite3").exists()
        finally:
            unlock()
        session.wait_for(
            lambda: _found(session, "focaccia rosemary dimple") == ["cooking/focaccia.md"],
            timeout=90, what="the store to be rebuilt once its folder can be made",
        )
        status = session.wait_ready(timeout=90)
        assert status.error is None and status.roots[0].files == 8
        assert "cooking/sourdough.md" in _found(session, "sourdough starter")
    finally:
        session.close()
