"""The engine of one workspace root: a small facade over indexing, search and related notes.

It knows nothing of LSP: the CLI, the daemon and the benchmarks all drive it through this API.
The work is done by `indexing.pipeline` (scan, parse, chunk, embed, write), `retrieval.hybrid`
(rankings, fusion, hits) and `retrieval.related`; the engine owns the store they share.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbls.config import Config, load_config, resolve_store, user_cache_dir
from kbls.errors import ConfigError, OutsideRootError, QueryError, StoreReadOnlyError
from kbls.indexing.chunk import Chunker
from kbls.indexing.embed import Embedder
from kbls.indexing.pipeline import IndexPipeline, ProgressFn
from kbls.indexing.scan import Scanner
from kbls.limits import MAX_LIMIT, MIN_LIMIT, MODES, RELATED_LIMIT, Mode
from kbls.links.suggest import NoteLinks
from kbls.links.view import NoteView
from kbls.query.filters import Filters
from kbls.query.syntax import parse_query
from kbls.results import Hit, IndexReport, RootStatus, Skipped
from kbls.retrieval.backlinks import LinkGraph
from kbls.retrieval.hybrid import HybridSearcher
from kbls.retrieval.listing import Listing
from kbls.retrieval.related import related_notes
from kbls.retrieval.rename import Renamer
from kbls.retrieval.vectors import VectorIndex
from kbls.storage.postgres.location import PgLocation
from kbls.storage.recovery import delete_store, open_or_recover
from kbls.storage.roles import Backend, VectorSearch

log = logging.getLogger(__name__)

__all__ = ["Engine", "ProgressFn", "SearchResult"]


@dataclass
class SearchResult:
    hits: list[Hit]
    #: the mode actually used: lexical when the model is not loaded yet.
    mode: Mode
    took_ms: float


class Engine:
    """Owns one root's `Store`, `Scanner` and in-memory `VectorIndex`; shares an `Embedder`."""

    def __init__(
        self,
        root: Path,
        *,
        config: Config | None = None,
        store_dir: Path | str | None = None,
        embedder: Embedder | None = None,
        overrides: dict[str, Any] | None = None,
        load_model_on_demand: bool = True,
        on_model_mismatch: str = "raise",
        check_store: bool = False,
        read_only: bool = False,
        ingest: bool = False,
    ) -> None:
        """:param store_dir: a store folder, or a team store's `postgresql://` URL (default: the
            config's `store`, else the per-user cache).
        :param read_only: for commands that only read (status, search), and for the daemon's
            root whose store cannot be written: nothing is created or written (`index` raises
            `StoreReadOnlyError`, but a team store's reader's returns its counts); a root never
            indexed gets an empty store in memory (see `Store`).
        :param ingest: write a team store (`kbls index`, the ingest worker); without it a team
            store is only read: editors and agents embed queries, never documents."""
        self.root = Path(root).resolve()
        if config is None:
            config, _ = load_config(self.root, overrides, store_given=store_dir is not None)
        self.config = config
        location = resolve_store(self.root, config, store_dir)
        #: the store is a team store (PostgreSQL), not this machine's SQLite file.
        self.team = isinstance(location, PgLocation)
        self.embedder = embedder or Embedder(config.model)
        self.chunker = Chunker(self.embedder, config.chunk)
        self.notice: str | None = None
        self.store: Backend
        self.vectors: VectorSearch
        if isinstance(location, PgLocation):
            from kbls.storage.postgres.store import PostgresStore

            read_only = read_only or not ingest
            #: a team store has no folder: this one (never created) stands for it where a folder is asked.
            self.store_dir = user_cache_dir() / "team" / location.root_name
            team = PostgresStore(
                location, model_id=self.embedder.model_id, dimension=self.embedder.dimension,
                model_sha256=self.embedder.sha256, write=not read_only,
            )
            self.store, self.vectors, self.store_path = team, team.vector_search(), self.store_dir
        else:
            self.store_dir = location
            #: notice: a plain-words message for the user when the store had to be set aside and rebuilt.
            local, self.notice = open_or_recover(
                self.store_dir, model_id=self.embedder.model_id, dimension=self.embedder.dimension,
                model_sha256=self.embedder.sha256, on_model_mismatch=on_model_mismatch, check=check_store,
                root=self.root, read_only=read_only,
            )
            self.store, self.vectors, self.store_path = local, VectorIndex(local), local.path
        self.scanner = Scanner(self.root, config, self.store_dir)
        self.load_model_on_demand = load_model_on_demand
        self.pipeline = IndexPipeline(config, self.store, self.scanner, self.chunker, self.embedder)
        #: bring the store up to date with the disk (`IndexPipeline.run`: every file or `paths`).
        self.index = self._refuse_index if read_only else self.pipeline.run
        if self.team and read_only:
            # The daemon scans a root it opens and each save: a reader of a team store has nothing to
            # write (its ingest worker writes it), and is never "paused" waiting to write.
            self.index = self._team_reader_index
        #: embed what a lexical pass left pending (`IndexPipeline.embed_pending`).
        self.embed_pending = self._refuse_index if read_only else self.pipeline.embed_pending
        self.searcher = HybridSearcher(self.root, self.store, self.vectors, self.embedder, config.search)
        #: link completion and resolution (`textDocument/completion`, `definition`, `documentLink`).
        self.links = NoteLinks(self.root, self.store, self.vectors, self.embedder, self.semantic_ready)
        #: tags by use and notes by modification time (`kb/tags`, `kb/notes`).
        self.listing = Listing(self.store)
        #: references and backlinks (`textDocument/references`, `kb/backlinks`, code lens) and
        #: renames (`textDocument/rename`, `workspace/willRenameFiles`).
        self.graph = LinkGraph(self.links, self.store, config.max_file_bytes)
        self.renames = Renamer(self.graph)

    @property
    def read_only(self) -> bool:
        """The store was opened read-only: it is searched, never written."""
        return self.store.read_only

    def _refuse_index(self, *_: object, **__: object) -> IndexReport:
        """`index` of a read-only engine: it cannot write, so it says so before touching anything."""
        if self.team:
            raise StoreReadOnlyError(
                f"{self.root} is searched in the team store {self.store.location}: its ingest worker writes it "
                "(`kbls index --store URL --root DIR`); this process only reads it"
            )
        raise StoreReadOnlyError(
            f"indexing {self.root} is paused: its store {self.store.location} cannot be written (its disk or file is "
            "read-only, or kbls may not write there), so kbls opened it read-only"
        )

    def _team_reader_index(self, *_: object, **__: object) -> IndexReport:
        """`index` of a team store's reader: nothing is read, embedded or written; the store's counts."""
        counts = self.store.counts()
        return IndexReport(files=counts.files, chunks=counts.chunks)

    @staticmethod
    def rebuild(root: Path, store_dir: Path | str | None = None, overrides: dict[str, Any] | None = None) -> Path:
        """Delete a root's store (e.g. to switch model); returns the directory removed.

        :raises ConfigError: the store is a team store (its database is the team's to drop)."""
        config, _ = load_config(Path(root).resolve(), overrides, store_given=store_dir is not None)
        location = resolve_store(Path(root).resolve(), config, store_dir)
        if isinstance(location, PgLocation):
            raise ConfigError(
                f"--rebuild deletes a store folder; {location.display} is a team store: to start it afresh, drop "
                "and create its database (docs/team.md), then run the ingest again"
            )
        return delete_store(location)

    def close(self) -> None:
        self.vectors.close()
        self.store.close()

    @property
    def embedded_total(self) -> int:
        """Texts embedded since this engine started."""
        return self.pipeline.embedded_total

    @property
    def reused_total(self) -> int:
        """Chunks whose stored vector was reused since this engine started."""
        return self.pipeline.reused_total

    def semantic_ready(self) -> bool:
        return self.embedder.loaded or self.load_model_on_demand

    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        mode: Mode | str | None = None,
        filters: Filters | None = None,
        group_by_file: bool = False,
        explain: bool = False,
        section_snippets: bool = False,
    ) -> SearchResult:
        """Hits for `query` (which may carry `tag:`, `path:`, `type:` terms), best first; with
        `explain`, each hit carries each signal's score and weight (`Hit.explain`); with
        `group_by_file` and `section_snippets`, each note's other sections carry their snippet
        (else "")."""
        started = time.perf_counter()
        limit = self.config.search.limit if limit is None else limit
        try:
            chosen = Mode(mode or self.config.search.mode)
        except ValueError:
            raise QueryError(f"mode must be one of {', '.join(MODES)}, not {mode!r}") from None
        _check_limit(limit)
        parsed = parse_query(query, filters)
        if chosen != Mode.LEXICAL and not self.semantic_ready():
            chosen = Mode.LEXICAL
        hits = self.searcher.search(parsed, limit, chosen, group_by_file, explain, section_snippets)
        return SearchResult(hits, chosen, (time.perf_counter() - started) * 1000)

    def related(self, path: Path, line: int | None = None, *, limit: int = RELATED_LIMIT) -> list[Hit]:
        """Notes near `path` (or the section at `line`) by meaning, links and tags; never itself."""
        _check_limit(limit)
        return related_notes(self.store, self.vectors, self.root, self.scanner.relative(path), line, limit)

    def open_notes(self, documents: Mapping[Path, NoteView]) -> dict[str, NoteView]:
        """The editor's open documents inside this root, by root-relative path (a path that
        reaches out of the root's real folder through a symlinked folder is not in it)."""
        real_root = Path(os.path.realpath(self.scanner.root))
        out = {}
        for path, lines in documents.items():
            try:
                rel = self.scanner.relative(path)
            except OutsideRootError:
                continue
            if Path(os.path.realpath(path.parent)).is_relative_to(real_root):
                out[rel] = lines
        return out

    def status(self) -> RootStatus:
        counts = self.store.counts()
        return RootStatus(
            root=str(self.root), store=self.store.location, store_bytes=self.store.size_bytes(),
            files=counts.files, chunks=counts.chunks, vectors=counts.vectors,
            model=self.embedder.model_id, dimension=self.embedder.dimension,
            sqlite=self.store.sqlite_info(),
            errors=[Skipped(p, e) for p, e in self.store.errors()],
        )


def _check_limit(limit: int) -> None:
    """The wire's limit rule for callers that bypass it (the CLI, MCP, tests)."""
    if not MIN_LIMIT <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be from {MIN_LIMIT} to {MAX_LIMIT}, not {limit}")
