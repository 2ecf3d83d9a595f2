"""`Store`: one workspace root's SQLite store (files, chunks, vectors, FTS5, links, tags).

SQL lives in `kbls.storage` and nowhere else: connections and the writer lock in `connection`,
tables and migrations in `schema`, full-text search in `fts`, queries in `reads`, transactions
in `writes`, the texts waiting for vectors in `pending`; `recovery` sets a damaged store aside.
`Store` ties them to one store directory.

A store records the workspace root it indexes and a generation token in `meta` (see
`kbls.storage.schema`); `Store.identity`/`Store.replaced` let a long-lived process notice that
its store file was deleted or replaced under it (a user clearing the cache, `kbls index --rebuild`).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from kbls.errors import CorruptStoreError, StoreBusyError, StoreError
from kbls.storage.connection import (
    BUSY_MESSAGE,
    SQLITE,
    Connection,
    ConnectionPool,
    DatabaseError,
    WriterLock,
    busy,
    memory_uri,
    read_only_refusal,
    read_only_uri,
    write_refused,
)
from kbls.storage.pending import StorePending
from kbls.storage.reads import StoreReads
from kbls.storage.schema import ensure_schema, read_schema
from kbls.storage.spans import StoreSpans
from kbls.storage.writes import StoreWrites

STORE_FILE = "kbls.sqlite3"
LOCK_FILE = "writer.lock"

__all__ = ["STORE_FILE", "Store", "StoreIdentity"]


@dataclass(frozen=True)
class StoreIdentity:
    """Which store file a path names now: equal identities mean the same, unreplaced store."""

    device: int
    inode: int
    #: `meta.generation`, "" when unreadable: a new store on a reused inode still differs.
    generation: str

    @staticmethod
    def of(path: Path) -> StoreIdentity | None:
        """The identity of the store file at `path`; None when there is none (deleted, or its
        folder). Costs a stat and a short read-only query (~0.2 ms): cheap before each job."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        generation = ""
        with contextlib.suppress(DatabaseError):
            conn = SQLITE.connect(read_only_uri(path), uri=True, timeout=1.0)
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
                generation = str(row[0]) if row else ""
            finally:
                conn.close()
        return StoreIdentity(st.st_dev, st.st_ino, generation)


class Store(StoreReads, StoreSpans, StorePending, StoreWrites):
    """One root's SQLite store. Safe from several threads: each thread that reads gets its own
    connection, writes go through one writer connection (see `ConnectionPool`)."""

    def __init__(
        self,
        directory: Path,
        *,
        model_id: str,
        dimension: int,
        model_sha256: str | None,
        check: bool = False,
        root: Path | None = None,
        read_only: bool = False,
    ) -> None:
        """Open (creating if needed) the store in `directory`.

        :param check: run SQLite's quick_check first.
        :param root: the workspace root whose index this is: recorded in a new store, checked
            against an existing one. None for tools that only inspect a store.
        :param read_only: create and write nothing, not even the folder: a store that does not
            exist yet is served as an empty one (in memory) so `kbls status` and `kbls search`
            on a root never indexed leave no trace.
        :raises CorruptStoreError, ModelMismatchError, StoreRootMismatchError, StoreFullError,
            StoreBusyError, StoreError: nothing stays open when one is raised.
        """
        self.directory = directory
        self.path = directory / STORE_FILE
        self.model_id = model_id
        self.dimension = dimension
        self.model_sha256 = model_sha256
        self.root = root
        self.read_only = read_only
        #: False for a read-only store that does not exist on disk (served empty, from memory).
        self.exists = True
        if read_only and not self.path.is_file():
            self.exists = False
            self.db = ConnectionPool(self.path, uri=memory_uri(f"kbls-empty-{uuid.uuid4().hex}"))
        else:
            if not read_only:
                try:
                    directory.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StoreError(f"cannot create the store directory {directory}: {exc.strerror}") from None
            self.db = ConnectionPool(self.path, read_only=read_only)
        self.lock = WriterLock(directory / LOCK_FILE)
        try:
            self.meta = self._open_schema(check)
        except BaseException:
            self.db.close()  # a store that failed to open holds no file open (recovery renames it)
            raise
        #: the store file this object opened (None when served from memory).
        self.opened: StoreIdentity | None = StoreIdentity.of(self.path) if self.exists else None

    @property
    def location(self) -> str:
        """The store's folder, for messages."""
        return str(self.directory)

    def identity(self) -> StoreIdentity | None:
        """The identity of the store file at `self.path` now (None: it is gone). See `replaced`."""
        return StoreIdentity.of(self.path)

    def replaced(self) -> bool:
        """Whether the store file this object opened was deleted or replaced since: its folder or
        file is gone, or another file (other inode, or other `meta.generation`) has its name.
        The connections of this object then still read the old, unlinked file: close it and
        open a new `Store`. Cheap (a stat and one small query): call it before each index job
        and when a search fails. A read-only store served empty reports True once a real store
        file appears."""
        now = self.identity()
        if now is None or self.opened is None:
            return now != self.opened
        if (now.device, now.inode) != (self.opened.device, self.opened.inode):
            return True
        # Same inode: only a generation read back ("" when the read failed, e.g. a busy disk)
        # can tell a new store on a reused inode; an unreadable one is no evidence.
        return now.generation not in ("", self.opened.generation)

    def _open_schema(self, check: bool) -> dict[str, str]:
        try:
            if self.read_only and self.exists:
                return read_schema(self.db, model_id=self.model_id, dimension=self.dimension, root=self.root)
            return ensure_schema(
                self.db, model_id=self.model_id, dimension=self.dimension, model_sha256=self.model_sha256,
                check=check, root=None if not self.exists else self.root,
            )
        except DatabaseError as exc:
            if self.read_only and read_only_refusal(exc):
                raise StoreError(f"cannot open the store {self.path}: {exc}") from None
            refused = None if self.read_only else write_refused(self.path, exc)
            if refused is not None:
                raise refused from None
            if busy(exc):
                raise StoreBusyError(BUSY_MESSAGE.format(path=self.path)) from None
            raise CorruptStoreError(f"the store {self.path} is not a usable kbls store ({exc})") from None

    @property
    def conn(self) -> Connection:
        """This thread's connection (for tests and tools that inspect the store)."""
        return self.db.conn

    def open_connection(self) -> Connection:
        """A connection of its own (e.g. for `PRAGMA data_version`), closed by `close()`."""
        return self.db.open()

    def close(self) -> None:
        self.db.close()
