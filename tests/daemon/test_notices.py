"""What the daemon tells the user when the store refuses an index job (issue 6 follow-up).

A read-only store is a `StoreFullError` too (the daemon keeps serving it and retries), but the
user was told "indexing resumes once space is freed" for a read-only disk.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kbls.daemon.answers import IndexState, NullListener, SafeListener
from kbls.daemon.jobs import Outcome
from kbls.daemon.notices import JobNotices
from kbls.daemon.roots import Root, RootRegistry
from kbls.daemon.status import StatusReporter
from kbls.engine import Engine
from kbls.errors import StoreFullError
from kbls.indexing.embed import Embedder
from kbls.storage.connection import write_refused


class Shown(NullListener):
    def __init__(self) -> None:
        self.shown: list[str] = []

    def show_message(self, level: int, message: str) -> None:
        self.shown.append(message)


def _first_message(tmp_path: Path, embedder: Embedder, sqlite_error: str) -> str:
    """The message of the first failed job whose write SQLite refused with `sqlite_error`."""
    root_dir = tmp_path / "notes"
    root_dir.mkdir()
    engine = Engine(root_dir, store_dir=tmp_path / "store", embedder=embedder)
    error = write_refused(engine.store.path, sqlite3.OperationalError(sqlite_error))
    assert isinstance(error, StoreFullError)
    listener = Shown()
    safe = SafeListener(listener)
    notices = JobNotices(RootRegistry(), StatusReporter(safe, lambda message: IndexState("error", 0)), safe)
    root = Root(root_dir.as_uri(), root_dir, engine)
    notices.failed(root, Outcome.FULL, str(error), error, 30.0)
    notices.failed(root, Outcome.FULL, str(error), error, 60.0)  # the same episode: not shown again
    assert len(listener.shown) == 1, listener.shown
    assert root.error == str(error)
    return listener.shown[0]


@pytest.mark.parametrize("sqlite_error", ["attempt to write a readonly database", "unable to open database file"])
def test_a_read_only_store_is_not_told_to_wait_for_free_space(
    tmp_path: Path, embedder: Embedder, sqlite_error: str
) -> None:
    message = _first_message(tmp_path, embedder, sqlite_error)
    assert "space" not in message, message
    assert "read-only" in message and "Searches answer from what is indexed" in message, message
    assert message.endswith("indexing resumes once the store can be written again."), message


def test_a_full_disk_is_told_to_wait_for_free_space(tmp_path: Path, embedder: Embedder) -> None:
    message = _first_message(tmp_path, embedder, "database or disk is full")
    assert message.endswith("indexing resumes once space is freed."), message
