"""`PostgresStore`: one root's index in a team database (PostgreSQL + pgvector).

It plays every role of `kbls.storage.roles.Backend`, as `kbls.storage.store.Store` does for
SQLite. Opened for writing (`write=True`: the ingest worker, `kbls index --store postgresql://…`)
it creates or migrates the schema and its root; opened for reading (the daemon, `kbls serve`,
`kbls mcp`) it creates nothing and refuses a database without this root or of another model.
"""

from __future__ import annotations

from collections.abc import Iterable

from kbls.query.filters import Filters
from kbls.results import SqliteInfo
from kbls.storage.postgres.connection import PgPool, PgWriterLock
from kbls.storage.postgres.lexical import PgLexical
from kbls.storage.postgres.location import PgLocation
from kbls.storage.postgres.reads import PgReads
from kbls.storage.postgres.schema import ensure_schema
from kbls.storage.postgres.spans import PgSpans
from kbls.storage.postgres.vectors import PgVectors
from kbls.storage.postgres.writes import PgWrites


class PostgresStore(PgReads, PgSpans, PgWrites):
    """One root of a team store. Safe from several threads (a connection per reading thread)."""

    def __init__(
        self, location: PgLocation, *, model_id: str, dimension: int, model_sha256: str | None, write: bool
    ) -> None:
        """:raises ModelMismatchError, StoreTooNewError, StoreUnavailableError, StoreError:
        nothing stays open when one is raised."""
        self.place = location
        self._model_id = model_id
        self._dimension = dimension
        self.db = PgPool(location.conninfo, location.display)
        try:
            self.meta, self.root_id = ensure_schema(
                self.db, model_id=model_id, dimension=dimension, model_sha256=model_sha256,
                root_name=location.root_name, write=write,
            )
        except BaseException:
            self.db.close()
            raise
        self.db.close()  # connections opened before the `vector` type existed cannot bind vectors
        self.db = PgPool(location.conninfo, location.display, writer=write)
        self.db.vectors_ready = True
        self._read_only = not write
        self._lock = PgWriterLock(self.db, location.root_name)
        self._lexical = PgLexical(self.db, self.root_id)

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def lock(self) -> PgWriterLock:
        return self._lock

    @property
    def location(self) -> str:
        return self.place.display

    def vector_search(self) -> PgVectors:
        return PgVectors(self.db, self.root_id, self._dimension)

    def lexical(self, match: str, filters: Filters, limit: int) -> list[tuple[int, float]]:
        return self._lexical.lexical(match, filters, limit)

    def term_doc_counts(self, terms: Iterable[str]) -> dict[str, int]:
        return self._lexical.term_doc_counts(terms)

    def chunk_count(self) -> int:
        return self._lexical.stats()[0]

    def lexical_generation(self) -> int | None:
        return self._lexical.revision()

    def size_bytes(self) -> int:
        row = self.db.one("SELECT pg_database_size(current_database())")
        return int(row[0]) if row else 0

    def sqlite_info(self) -> SqliteInfo:
        """What serves this store, in the shape `kbls status` shows (module, version, vector extension)."""
        row = self.db.one(
            "SELECT current_setting('server_version'), (SELECT extversion FROM pg_extension WHERE extname = 'vector')"
        )
        server, vec = (str(row[0]), str(row[1])) if row else ("?", "?")
        return SqliteInfo(module="postgresql", version=server, vec=f"pgvector {vec}")

    def replaced(self) -> bool:
        """A team store is never replaced under a reader the way a store file is."""
        return False

    def close(self) -> None:
        self.db.close()
