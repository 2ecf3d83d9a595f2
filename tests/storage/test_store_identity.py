"""Issue 14, storage side: a store knows whose index it holds, a process can tell that its store
file was deleted or replaced, read-only opens leave no trace, and a store that fails to open
holds no file open. Real SQLite + sqlite-vec; no model (nothing is embedded)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from kbls.errors import CorruptStoreError, StoreRootMismatchError
from kbls.query.filters import Filters
from kbls.storage.recovery import delete_store, set_aside
from kbls.storage.store import STORE_FILE, Store, StoreIdentity


def _open(directory: Path, root: Path | None = None, *, read_only: bool = False) -> Store:
    return Store(directory, model_id="test", dimension=8, model_sha256=None, root=root, read_only=read_only)


def _meta(directory: Path) -> dict[str, str]:
    with sqlite3.connect(directory / STORE_FILE) as conn:
        return dict(conn.execute("SELECT key, value FROM meta"))


def test_a_store_records_its_root_and_a_generation(tmp_path: Path) -> None:
    root = tmp_path / "a"
    root.mkdir()
    _open(tmp_path / "s", root).close()
    meta = _meta(tmp_path / "s")
    assert meta["root"] == str(root) and len(meta["generation"]) == 32
    _open(tmp_path / "s", root).close()  # the same root opens it again
    assert _meta(tmp_path / "s")["generation"] == meta["generation"]


def test_another_root_that_exists_is_refused_with_both_roots_and_the_setting_named(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    _open(tmp_path / "s", first).close()
    with pytest.raises(StoreRootMismatchError) as caught:
        _open(tmp_path / "s", second)
    message = str(caught.value)
    assert str(first) in message and str(second) in message and "`store:`" in message
    assert _meta(tmp_path / "s")["root"] == str(first)  # refused without a change


def test_a_moved_root_takes_its_store_along(tmp_path: Path) -> None:
    """A recorded root that no longer exists was moved or renamed: the store follows it."""
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    _open(tmp_path / "s", old).close()
    old.rename(new)
    _open(tmp_path / "s", new).close()
    assert _meta(tmp_path / "s")["root"] == str(new)


def test_a_store_of_an_earlier_version_gets_a_root_and_a_generation(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    _open(tmp_path / "s").close()
    with sqlite3.connect(tmp_path / "s" / STORE_FILE) as conn:
        conn.execute("DELETE FROM meta WHERE key IN ('root', 'generation')")
    _open(tmp_path / "s", root).close()
    meta = _meta(tmp_path / "s")
    assert meta["root"] == str(root) and meta["generation"]


def test_replaced_notices_a_deleted_file_a_deleted_folder_and_a_new_store(tmp_path: Path) -> None:
    directory = tmp_path / "s"
    store = _open(directory)
    assert store.opened is not None and store.identity() == store.opened and not store.replaced()

    delete_store(directory)  # `kbls index --rebuild` in another process
    assert store.identity() is None and store.replaced()
    fresh = _open(directory)  # a new file under the same name, maybe on the same inode
    assert fresh.opened is not None and store.replaced() and not fresh.replaced()
    assert fresh.opened.generation != store.opened.generation

    fresh.close()
    store.close()
    for path in directory.iterdir():
        path.unlink()
    directory.rmdir()  # a user clearing the cache folder
    assert fresh.replaced() and StoreIdentity.of(directory / STORE_FILE) is None


def test_read_only_on_a_missing_store_creates_nothing_and_reads_empty(tmp_path: Path) -> None:
    directory = tmp_path / "never" / "indexed"
    store = _open(directory, tmp_path, read_only=True)
    try:
        assert not store.exists and store.counts().files == 0 and store.files() == {}
        assert store.lexical('"anything"', Filters(), 5) == []
        # a second connection (VectorIndex's) sees the same empty schema
        assert store.open_connection().execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0
    finally:
        store.close()
    assert not (tmp_path / "never").exists()


def test_read_only_on_an_existing_store_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    _open(tmp_path / "s", root).close()
    before = {p.name: p.read_bytes() for p in (tmp_path / "s").iterdir() if p.name == STORE_FILE}
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(StoreRootMismatchError):  # checked read-only too
        _open(tmp_path / "s", other, read_only=True)
    store = _open(tmp_path / "s", root, read_only=True)
    assert store.exists and store.counts().chunks == 0 and not store.replaced()
    store.close()
    assert {p.name: p.read_bytes() for p in (tmp_path / "s").iterdir() if p.name == STORE_FILE} == before


def test_a_store_that_fails_to_open_holds_no_file_open(tmp_path: Path) -> None:
    """Recovery renames a damaged store: the Store that failed must have closed it itself
    (this needed a gc.collect() before)."""
    directory = tmp_path / "s"
    directory.mkdir()
    (directory / STORE_FILE).write_bytes(os.urandom(64 * 1024))
    with pytest.raises(CorruptStoreError):
        _open(directory)
    fds = Path(f"/proc/{os.getpid()}/fd")
    if not fds.is_dir():
        pytest.skip("no /proc on this system")
    open_files = {os.path.realpath(fd) for fd in fds.iterdir() if fd.is_symlink()}
    assert not any(path.startswith(str(directory)) for path in open_files), open_files
    aside = set_aside(directory, "damaged")
    assert aside.exists() and not (directory / STORE_FILE).exists()


def test_read_only_and_identity_work_for_a_folder_name_with_uri_characters(tmp_path: Path) -> None:
    """Read-only opens and identity checks go through `file:` URIs: `?`, `#`, `%` must be escaped."""
    directory = tmp_path / "odd ?#% name"
    _open(directory).close()
    store = _open(directory, read_only=True)
    try:
        assert store.exists and store.opened is not None and store.opened.generation
        assert not store.replaced()
    finally:
        store.close()
