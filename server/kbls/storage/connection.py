"""Opening SQLite connections to a store: the SQLite module, sqlite-vec, pragmas, transactions.

One store file per root in WAL mode, so readers never wait behind the single writer. Each thread
that reads gets its own connection (`ConnectionPool.conn`); writes go through `atomic()`, one
`BEGIN IMMEDIATE` transaction at a time per process, and `WriterLock` (flock on a file next to
the store) makes sure only one process writes at a time. SQLite's own error strings are mapped
to the named errors of `kbls.errors` here and nowhere else.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import IO, cast
from urllib.parse import quote

from kbls.errors import (
    CorruptStoreError,
    StoreBusyError,
    StoreClosedError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
)
from kbls.query.globs import glob_matches

BUSY_MESSAGE = (
    "the store {path} is busy: another process has been writing it for over 30 s "
    "(a stopped `kbls index`?); try again once it has finished"
)
BUSY_TIMEOUT_S = 30.0

#: a connection of the stdlib `sqlite3` or of `sqlean` (same DB-API, same methods).
Connection = sqlite3.Connection


def _sqlite_module() -> tuple[ModuleType, str]:
    """The stdlib sqlite3 when it can load extensions, else sqlean.py (bundled SQLite + FTS5)."""
    probe = sqlite3.connect(":memory:")
    try:
        if hasattr(probe, "enable_load_extension"):
            return sqlite3, "sqlite3"
    finally:
        probe.close()
    import sqlean

    return cast(ModuleType, sqlean), "sqlean"


SQLITE, SQLITE_MODULE_NAME = _sqlite_module()
DatabaseError: type[Exception] = SQLITE.DatabaseError
OperationalError: type[Exception] = SQLITE.OperationalError


def cannot_write(exc: BaseException) -> bool:
    """A full (or failing) disk: the store is fine and must not be taken for a damaged one."""
    return "disk is full" in str(exc) or "disk I/O error" in str(exc)


def read_only_refusal(exc: BaseException) -> bool:
    """SQLite cannot write the store (SQLITE_READONLY), or cannot open it at all (SQLITE_CANTOPEN:
    a WAL store on a read-only disk, no permission): the file is not damaged, so it must not be
    set aside (on a read-only disk the rename itself failed with a traceback)."""
    return "readonly database" in str(exc) or "unable to open database file" in str(exc)


def write_refused(path: Path, exc: BaseException) -> StoreFullError | None:
    """The named error of a write that the disk refused (full, failing or read-only), or None."""
    if read_only_refusal(exc):
        return StoreReadOnlyError(
            f"cannot write the store {path}: its disk or file is read-only, or kbls may not write there ({exc})"
        )
    if cannot_write(exc):
        return StoreFullError(f"cannot write the store {path}: {exc}")
    return None


def busy(exc: BaseException) -> bool:
    """Another process held the write lock past the busy timeout (e.g. a stopped `kbls index`)."""
    return "database is locked" in str(exc) or "database is busy" in str(exc)


def _sql_glob(pattern: str, path: str) -> int:
    return 1 if glob_matches(pattern, path) else 0


def read_only_uri(path: Path) -> str:
    """The URI that opens `path` read-only: nothing is created, a missing file is an error.

    On a read-only file system the store is opened `immutable`: SQLite cannot open a WAL store
    read-only without creating its `-shm` file, and no process can change it there anyway."""
    uri = f"file:{quote(path.as_posix(), safe='/:')}?mode=ro"  # `?`, `#`, `%` in a path are escaped
    return uri + "&immutable=1" if _on_read_only_file_system(path.parent) else uri


def _on_read_only_file_system(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no such folder; no statvfs (Windows)
        return False


def memory_uri(name: str) -> str:
    """The URI of an in-memory database that every connection of this process naming it shares."""
    return f"file:{quote(name)}?mode=memory&cache=shared"


def connect(path: Path, *, read_only: bool = False, uri: str | None = None) -> Connection:
    """A connection to the store file at `path` with sqlite-vec loaded and kbls's pragmas set.

    :param read_only: open with `mode=ro`: a missing file is an error instead of being created.
    :param uri: open this URI instead of `path` (`memory_uri`); `path` still names it in errors.
    :raises StoreFullError: the disk refuses writes.
    :raises CorruptStoreError: the file cannot be opened as a database.
    """
    try:
        target = uri or (read_only_uri(path) if read_only else str(path))
        conn = cast(
            Connection,
            SQLITE.connect(
                target, timeout=BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None, uri=target.startswith("file:")
            ),
        )
        conn.enable_load_extension(True)
        import sqlite_vec

        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA foreign_keys = ON")
        if not read_only:
            conn.execute("PRAGMA synchronous = NORMAL")
        conn.create_function("kb_glob", 2, _sql_glob, deterministic=True)
    except DatabaseError as exc:
        if read_only and read_only_refusal(exc):
            raise StoreError(f"cannot open the store {path}: {exc}") from None
        refused = None if read_only else write_refused(path, exc)
        if refused is not None:
            raise refused from None
        raise CorruptStoreError(f"cannot open the store {path}: {exc}") from None
    return conn


class ConnectionPool:
    """The connections of one store file: one per reading thread, closed together; a thread's
    is closed soon after the thread ends (each client of the per-user daemon has reading
    threads of its own, and the CLI connects once per query)."""

    def __init__(self, path: Path, *, read_only: bool = False, uri: str | None = None) -> None:
        self.path = path
        self.read_only = read_only
        self.uri = uri
        self._local = threading.local()
        # guards `_connections` and `_closed` (appended from any reading thread, cleared by close()).
        self._conn_lock = threading.Lock()
        self._connections: list[Connection] = []
        #: the thread each per-thread connection belongs to
        self._owners: dict[Connection, threading.Thread] = {}
        self._closed = False
        # serialises this process's write transactions on the shared writer connection.
        self._write_lock = threading.RLock()

    def open(self) -> Connection:
        """A new connection that `close()` closes too (e.g. `VectorIndex`'s own).

        :raises StoreClosedError: after `close()`: a late read must not open the replaced file
            again (its connection would keep that file alive and never be closed).
        """
        with self._conn_lock:
            closed = self._closed
        if not closed:
            conn = connect(self.path, read_only=self.read_only, uri=self.uri)
            with self._conn_lock:
                closed = self._closed
                if not closed:
                    self._connections.append(conn)
                    return conn
            conn.close()  # closed while it opened
        raise StoreClosedError(f"the store {self.path} was closed (its root is being reopened)")

    @property
    def conn(self) -> Connection:
        """This thread's connection."""
        conn = cast("Connection | None", getattr(self._local, "conn", None))
        if conn is None:
            conn = self.open()
            self._local.conn = conn
            self._adopt(conn)
        return conn

    def _adopt(self, conn: Connection) -> None:
        """Record `conn` as this thread's and close those of threads that have ended (no one
        else reads a thread's connection, so a dead thread's is idle for good)."""
        with self._conn_lock:
            self._owners[conn] = threading.current_thread()
            ended = [c for c, thread in self._owners.items() if not thread.is_alive()]
            for stale in ended:
                del self._owners[stale]
                if stale in self._connections:
                    self._connections.remove(stale)
        for stale in ended:
            with contextlib.suppress(Exception):
                stale.close()

    def thread_flag(self, name: str) -> bool:
        """Whether `set_thread_flag(name)` ran on this thread's connection (per-connection state)."""
        return bool(getattr(self._local, name, False))

    def set_thread_flag(self, name: str) -> None:
        setattr(self._local, name, True)

    def close(self) -> None:
        with self._conn_lock:
            self._closed = True
            for conn in self._connections:
                with contextlib.suppress(Exception):
                    conn.close()
            self._connections.clear()
            self._owners.clear()
        self._local = threading.local()

    @contextlib.contextmanager
    def atomic(self) -> Iterator[Connection]:
        """One write transaction (BEGIN IMMEDIATE: take the write lock up front, no upgrade deadlock)."""
        with self._write_lock:
            conn = self.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    # On a full disk SQLite may have rolled back already; a second ROLLBACK
                    # would raise and hide the real error.
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except OperationalError as exc:
                refused = write_refused(self.path, exc)
                if refused is not None:
                    raise refused from None
                if busy(exc):
                    raise StoreBusyError(BUSY_MESSAGE.format(path=self.path)) from None
                raise


class WriterLock:
    """A cross-process lock (flock) so that one process at a time writes a store."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.Lock()

    @contextlib.contextmanager
    def hold(self, timeout: float | None = None) -> Iterator[bool]:
        """Yield True once the lock is held; False if `timeout` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._thread_lock.acquire(timeout=-1 if timeout is None else timeout):
            yield False
            return
        try:
            handle = self._open()
            if not _flock(handle, deadline):
                handle.close()
                yield False
                return
            try:
                yield True
            finally:
                handle.close()  # closing releases the flock
        finally:
            self._thread_lock.release()

    def _open(self) -> IO[bytes]:
        """The lock file, opened for writing (closed by `hold`: closing releases the flock).

        :raises StoreReadOnlyError: kbls may not write it (permissions, a read-only disk).
        :raises StoreError: it cannot be opened otherwise (a folder in its place, an I/O error).
        """
        try:
            return open(self.path, "a+b")
        except OSError as exc:
            if isinstance(exc, PermissionError) or exc.errno == errno.EROFS:
                raise StoreReadOnlyError(
                    f"cannot write the store in {self.path.parent}: kbls may not open its lock file "
                    f"{self.path.name} for writing ({exc.strerror or exc}); searches still work"
                ) from None
            raise StoreError(f"cannot open the store's lock file {self.path}: {exc.strerror or exc}") from None


def _flock(handle: IO[bytes], deadline: float | None) -> bool:
    """Take an exclusive flock on `handle`, polling until `deadline`; True once held."""
    try:
        import fcntl
    except ImportError:  # Windows: one process per store is the documented limit
        return True
    while True:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.05)
