"""Connections to a team store: one per reading thread, a writer's transactions, the ingest lock.

Readers use autocommit connections: each query sees the notes committed before it (a note being
written is seen before or after its transaction, never half). A connection that drops (the
server restarted, a network blip) is opened again once, on the next query; when that fails too
the query raises `StoreUnavailableError` naming the store. The writer's lock is a session
advisory lock on a connection of its own, so a killed ingest (kill -9, a lost CI runner) frees
it the moment the server sees the connection close.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import zlib
from collections.abc import Iterator, Sequence
from typing import Any, cast

from kbls.errors import StoreBusyError, StoreError

try:
    import psycopg
    from pgvector.psycopg import register_vector
except ImportError as exc:  # pragma: no cover - the extra is part of every test install
    raise StoreError(
        "a postgresql:// store needs psycopg and pgvector: install kbls with its `postgres` extra "
        "(`pip install 'kbls[postgres]'`)"
    ) from exc

Row = tuple[Any, ...]
Params = dict[str, object] | Sequence[object] | None
#: how long to wait for a server before saying it cannot be reached.
CONNECT_TIMEOUT_S = 10


class StoreUnavailableError(StoreError):
    """The team store's server cannot be reached (the query may be retried later)."""


def _connect(conninfo: str, display: str, *, vectors: bool, name: str) -> psycopg.Connection[Row]:
    try:
        conn = psycopg.connect(
            conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, application_name=name
        )
    except psycopg.Error as exc:
        raise StoreUnavailableError(f"cannot connect to the store {display}: {str(exc).strip()}") from None
    if vectors:
        register_vector(conn)
    return conn


class PgPool:
    """The connections of one team store: one per reading thread, closed together."""

    def __init__(self, conninfo: str, display: str, *, writer: bool = False) -> None:
        self.conninfo = conninfo
        self.display = display
        #: the ingest worker's pool: its commits do not wait for the WAL flush (see `open`).
        self.writer = writer
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[psycopg.Connection[Row]] = []
        self._closed = False
        self._write_lock = threading.RLock()
        #: set once the `vector` type exists (register_vector looks its oid up).
        self.vectors_ready = False

    def open(self, name: str = "kbls") -> psycopg.Connection[Row]:
        with self._lock:
            if self._closed:
                raise StoreError(f"the store {self.display} was closed")
        conn = _connect(self.conninfo, self.display, vectors=self.vectors_ready, name=name)
        if self.writer:
            # A server crash may lose the last notes committed (never half of one): the next
            # ingest writes them again, as their hashes were not stored. Waiting for each note's
            # WAL flush made the ingest ~10x slower than the SQLite store's.
            conn.execute("SET synchronous_commit = off")
        with self._lock:
            self._connections.append(conn)
        return conn

    @property
    def conn(self) -> psycopg.Connection[Row]:
        conn = cast("psycopg.Connection[Row] | None", getattr(self._local, "conn", None))
        if conn is None or conn.closed:
            conn = self.open()
            self._local.conn = conn
        return conn

    def _forget(self, conn: psycopg.Connection[Row]) -> None:
        with contextlib.suppress(Exception):
            conn.close()
        with self._lock:
            if conn in self._connections:
                self._connections.remove(conn)
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None

    def fetch(self, sql: str, params: Params = None, settings: Sequence[str] = ()) -> list[Row]:
        """The rows of one query on this thread's connection; a dropped connection is opened
        again once (a read repeats safely). `settings` (`SET LOCAL …` statements, kbls's own,
        never user input) apply to this query alone, in a transaction of its own."""
        for attempt in (1, 2):
            conn = self.conn
            try:
                if not settings:
                    return conn.execute(sql, params).fetchall()
                with conn.transaction():
                    for setting in settings:
                        conn.execute(setting)
                    return conn.execute(sql, params).fetchall()
            except psycopg.OperationalError as exc:
                if not (conn.broken or conn.closed):
                    raise StoreError(f"the store {self.display} refused a query: {str(exc).strip()}") from None
                self._forget(conn)
                if attempt == 2:
                    raise StoreUnavailableError(
                        f"lost the connection to the store {self.display}: {str(exc).strip()}"
                    ) from None
        raise AssertionError("unreachable")

    def one(self, sql: str, params: Params = None) -> Row | None:
        rows = self.fetch(sql, params)
        return rows[0] if rows else None

    @contextlib.contextmanager
    def atomic(self) -> Iterator[psycopg.Connection[Row]]:
        """One write transaction on this thread's connection (never retried: the caller decides)."""
        with self._write_lock:
            conn = self.conn
            try:
                with conn.transaction():
                    yield conn
            except psycopg.OperationalError as exc:
                if conn.broken or conn.closed:
                    self._forget(conn)
                    raise StoreUnavailableError(
                        f"lost the connection to the store {self.display} while writing (the note's "
                        f"transaction was rolled back; run the ingest again): {str(exc).strip()}"
                    ) from None
                raise StoreError(f"the store {self.display} refused a write: {str(exc).strip()}") from None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for conn in connections:
            with contextlib.suppress(Exception):
                conn.close()
        self._local = threading.local()


def lock_key(root_name: str) -> int:
    """The advisory lock of one root's writer: a stable signed 32-bit key (class 0x6b62, "kb")."""
    key = zlib.crc32(root_name.encode("utf-8"))
    return key - (1 << 32) if key >= 1 << 31 else key


class PgWriterLock:
    """One ingest worker per root: `pg_try_advisory_lock` on a session of its own.

    Unlike the SQLite store's flock, a worker that finds the lock taken never waits: two CI jobs
    or timers on one root are a mistake to report, not a queue (`hold(None)` raises
    `StoreBusyError` naming the holder)."""

    CLASS = 0x6B62

    def __init__(self, pool: PgPool, root_name: str) -> None:
        self.pool = pool
        self.root_name = root_name
        self.key = lock_key(root_name)
        self._thread_lock = threading.Lock()

    @contextlib.contextmanager
    def hold(self, timeout: float | None = None) -> Iterator[bool]:
        if not self._thread_lock.acquire(timeout=-1 if timeout is None else timeout):
            yield False
            return
        try:
            me = f"kbls index on {socket.gethostname()} pid {os.getpid()}"
            conn = self.pool.open(name=me[:63])
            try:
                row = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (self.CLASS, self.key)).fetchone()
                if not (row and row[0]):
                    holder = self._holder(conn)
                    if timeout is not None:
                        yield False
                        return
                    raise StoreBusyError(
                        f"another ingest worker is writing root {self.root_name!r} of {self.pool.display} "
                        f"({holder}); refusing to write beside it: wait for it to finish, or stop it"
                    )
                yield True
            finally:
                with contextlib.suppress(Exception):
                    conn.close()  # closing the session releases the lock
        finally:
            self._thread_lock.release()

    def _holder(self, conn: psycopg.Connection[Row]) -> str:
        row = conn.execute(
            "SELECT a.application_name, a.client_addr::text, extract(epoch FROM a.backend_start) "
            "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.classid = %s AND l.objid = %s AND l.granted LIMIT 1",
            (self.CLASS, self.key & 0xFFFFFFFF),
        ).fetchone()
        if row is None:
            return "it has just finished"
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(row[2])))
        return f"{row[0] or 'a client'} from {row[1] or 'a local socket'}, since {since}"
