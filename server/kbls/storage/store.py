"""`Store`: one workspace root's SQLite store (files, chunks, vectors, FTS5, links, tags).

SQL lives in `kbls.storage` and nowhere else: connections and the writer lock in `connection`,
tables and migrations in `schema`, full-text search in `fts`, queries in `reads`, transactions
in `writes`; `recovery` sets a damaged store aside. `Store` ties them to one store directory.
"""

from __future__ import annotations

from pathlib import Path

from kbls.errors import CorruptStoreError, StoreBusyError, StoreError, StoreFullError
from kbls.query.filters import Filters
from kbls.storage.connection import BUSY_MESSAGE, Connection, ConnectionPool, DatabaseError, WriterLock, busy, cannot_write
from kbls.storage.reads import StoreReads
from kbls.storage.records import ChunkRecord, FileRow, NoteRecord
from kbls.storage.schema import SCHEMA_VERSION, ensure_schema
from kbls.storage.writes import StoreWrites

STORE_FILE = "kbls.sqlite3"
LOCK_FILE = "writer.lock"

# Transitional re-exports while the renovation moves importers to the new homes:
# Filters -> kbls.query.filters; ChunkRecord, FileRow, NoteRecord -> kbls.storage.records.
__all__ = ["SCHEMA_VERSION", "STORE_FILE", "ChunkRecord", "FileRow", "Filters", "NoteRecord", "Store"]


class Store(StoreReads, StoreWrites):
    """One root's SQLite store. Safe from several threads: each thread that reads gets its own
    connection, writes go through one writer connection (see `ConnectionPool`)."""

    def __init__(
        self, directory: Path, *, model_id: str, dimension: int, model_sha256: str | None, check: bool = False
    ) -> None:
        """Open (creating if needed) the store in `directory`.

        :param check: run SQLite's quick_check first.
        :raises CorruptStoreError, ModelMismatchError, StoreFullError, StoreBusyError, StoreError:
            nothing stays open when one is raised.
        """
        self.directory = directory
        self.path = directory / STORE_FILE
        self.model_id = model_id
        self.dimension = dimension
        self.model_sha256 = model_sha256
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store directory {directory}: {exc.strerror}") from None
        self.lock = WriterLock(directory / LOCK_FILE)
        self.db = ConnectionPool(self.path)
        try:
            self.meta = self._open_schema(check)
        except BaseException:
            self.db.close()  # a store that failed to open holds no file open (recovery renames it)
            raise

    def _open_schema(self, check: bool) -> dict[str, str]:
        try:
            return ensure_schema(
                self.db, model_id=self.model_id, dimension=self.dimension, model_sha256=self.model_sha256, check=check
            )
        except DatabaseError as exc:
            if cannot_write(exc):
                raise StoreFullError(f"cannot write the store {self.path}: {exc}") from None
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
