"""The engine of one workspace root: incremental indexing, hybrid search and related notes.

It knows nothing of LSP: the CLI, the daemon and the benchmarks all drive it through this API.
The file hash decides whether a file is parsed, the chunk hash whether a chunk is embedded.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kbls.config import Config, load_config, resolve_store_dir
from kbls.errors import CorruptStoreError, ModelMismatchError, OutsideRootError, QueryError
from kbls.indexing.chunk import Chunker
from kbls.indexing.embed import Embedder
from kbls.indexing.parse import parse_note
from kbls.indexing.scan import Candidate, Scanner
from kbls.query.syntax import STOPWORDS, ParsedQuery, fts_match, parse_query, query_terms
from kbls.results import Hit, IndexReport, RootStatus, Signals, Skipped, SqliteInfo
from kbls.retrieval.snippet import make_snippet
from kbls.retrieval.vectors import VectorIndex
from kbls.storage.store import STORE_FILE, ChunkRecord, Filters, NoteRecord, Store

log = logging.getLogger(__name__)

MODES = ("hybrid", "semantic", "lexical")
#: how many candidates each ranking contributes to fusion, per requested hit.
CANDIDATES_PER_HIT = 5
MIN_CANDIDATES = 50
#: a stopword matching more chunks than this is left out of the FTS query (see query.STOPWORDS).
STOPWORD_MAX_CHUNKS = 2000
#: below this cosine similarity a note is not "related" by meaning alone (MiniLM scale: unrelated
#: notes score around 0 to 0.15, notes on one topic 0.3 and up).
RELATED_MIN_SIMILARITY = 0.25

ProgressFn = Callable[[int, int, str], None]


@dataclass
class SearchResult:
    hits: list[Hit]
    #: the mode actually used: "lexical" when the model is not loaded yet.
    mode: str
    took_ms: float


def _file_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _chunk_id(path: str, chunk_hash: str, occurrence: int) -> str:
    return hashlib.blake2b(f"{path}\0{chunk_hash}\0{occurrence}".encode(), digest_size=10).hexdigest()


class Engine:
    """Owns one root's `Store`, `Scanner` and in-memory `VectorIndex`; shares an `Embedder`."""

    def __init__(
        self,
        root: Path,
        *,
        config: Config | None = None,
        store_dir: Path | None = None,
        embedder: Embedder | None = None,
        overrides: dict[str, Any] | None = None,
        load_model_on_demand: bool = True,
        on_model_mismatch: str = "raise",
        check_store: bool = False,
    ) -> None:
        self.root = Path(root).resolve()
        if config is None:
            config, _ = load_config(self.root, overrides)
        self.config = config
        self.store_dir = resolve_store_dir(self.root, config, store_dir)
        self.embedder = embedder or Embedder(config.model)
        self.chunker = Chunker(self.embedder, config.chunk)
        self.scanner = Scanner(self.root, config, self.store_dir)
        #: a plain-words message for the user when the store had to be set aside and rebuilt.
        self.notice: str | None = None
        self.store = self._open_store(on_model_mismatch, check_store)
        self.vectors = VectorIndex(self.store)
        self.load_model_on_demand = load_model_on_demand
        #: since this engine started: texts embedded, chunks whose vector was reused.
        self.embedded_total = 0
        self.reused_total = 0
        self._index_lock = threading.Lock()

    def _open_store(self, on_model_mismatch: str, check: bool) -> Store:
        """Open the store; a damaged or foreign one is moved aside and a new one started (and a
        store of another model too, when `on_model_mismatch == "rebuild"`)."""
        def open_store() -> Store:
            return Store(
                self.store_dir, model_id=self.embedder.model_id, dimension=self.embedder.dimension,
                model_sha256=self.embedder.sha256, check=check,
            )

        try:
            return open_store()
        except ModelMismatchError as exc:
            if on_model_mismatch != "rebuild":
                raise
            aside = self._set_aside("other-model")
            self.notice = f"{exc} The old store was moved to {aside.name}; the notes are re-indexed with the new model."
        except CorruptStoreError as exc:
            aside = self._set_aside("damaged")
            self.notice = f"{exc}. It was moved to {aside.name} and the notes are indexed again from scratch."
        log.info("%s", self.notice)
        return open_store()

    def _set_aside(self, why: str) -> Path:
        """Rename the store files to `kbls.sqlite3.<why>-<time>`; keeps evidence, frees the name."""
        import gc

        gc.collect()  # close connections of the Store object that failed to open
        stamp = time.strftime("%Y%m%d-%H%M%S")
        base = self.store_dir / STORE_FILE
        aside = self.store_dir / f"{STORE_FILE}.{why}-{stamp}"
        if base.exists():
            base.replace(aside)
        for suffix in ("-wal", "-shm"):
            Path(str(base) + suffix).unlink(missing_ok=True)
        return aside

    @staticmethod
    def rebuild(root: Path, store_dir: Path | None = None, overrides: dict[str, Any] | None = None) -> Path:
        """Delete a root's store (e.g. to switch model); returns the directory removed."""
        config, _ = load_config(Path(root).resolve(), overrides)
        directory = resolve_store_dir(Path(root).resolve(), config, store_dir)
        for name in (STORE_FILE, STORE_FILE + "-wal", STORE_FILE + "-shm"):
            (directory / name).unlink(missing_ok=True)
        return directory

    def close(self) -> None:
        self.vectors.close()
        self.store.close()

    # -- indexing ----------------------------------------------------------------------------
    def index(
        self,
        paths: Iterable[Path] | None = None,
        *,
        force: bool = False,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        wait: bool = True,
    ) -> IndexReport:
        """Bring the store up to date with the disk: every file (paths=None) or just `paths`.

        :param force: re-read files whose size and mtime did not change (never re-embeds a
            chunk whose vector is stored).
        :param wait: when False and another process is writing this store, return at once
            with `busy=True`.
        """
        started = time.perf_counter()
        with self._index_lock, self.store.lock.hold(timeout=None if wait else 0.0) as held:
            if not held:
                return IndexReport(busy=True, seconds=time.perf_counter() - started)
            report = self._index_locked(None if paths is None else list(paths), force, progress, cancel)
        counts = self.store.counts()
        report.files, report.chunks = counts["files"], counts["chunks"]
        report.seconds = time.perf_counter() - started
        return report

    def _index_locked(
        self, paths: list[Path] | None, force: bool, progress: ProgressFn | None, cancel: threading.Event | None
    ) -> IndexReport:
        report = IndexReport()
        gone: list[str] = []
        if paths is None:
            known = self.store.files()
            candidates = self.scanner.walk()
            on_disk = {c.rel_path for c in candidates}
            gone = sorted(p for p in known if p not in on_disk)
        else:
            candidates = []
            rels: list[str] = []
            for path in paths:
                try:
                    rels.append(self.scanner.relative(path))
                except OutsideRootError as exc:
                    report.skipped.append(Skipped(str(path), str(exc)))
            known = self.store.files(rels)  # only these rows: a save must stay cheap at 50k files
            for rel in rels:
                candidate = self.scanner.candidate(rel) if self.scanner.wanted(rel) else None
                if candidate is None:
                    if rel in known:
                        gone.append(rel)
                else:
                    candidates.append(candidate)
        report.scanned = len(candidates)
        work = [c for c in candidates if force or self._changed(c, known.get(c.rel_path))]
        batch = _Batch(self)
        for done, candidate in enumerate(work, 1):
            if cancel is not None and cancel.is_set():
                break
            prepared = self._prepare(candidate, known.get(candidate.rel_path), force, report)
            if prepared is not None:
                batch.add(prepared)
                if batch.full:
                    batch.flush(report)
            if progress is not None:
                progress(done, len(work), candidate.rel_path)
        batch.flush(report)
        if cancel is None or not cancel.is_set():
            for rel in gone:
                if self.store.delete_file(rel):
                    report.deleted += 1
            if paths is None:
                self.store.collect_garbage()
        self.embedded_total += report.embedded
        self.reused_total += report.reused
        return report

    @staticmethod
    def _changed(candidate: Candidate, row: Any) -> bool:
        if row is None or candidate.problem:
            return True
        return row.size != candidate.size or row.mtime_ns != candidate.mtime_ns

    def _prepare(self, candidate: Candidate, row: Any, force: bool, report: IndexReport) -> NoteRecord | None:
        """Read, hash, parse and chunk one file; None when nothing needs writing."""
        rel = candidate.rel_path

        def skip(reason: str) -> None:
            log.info("skipping %s: %s", rel, reason)
            report.skipped.append(Skipped(rel, reason))
            self.store.record_problem(rel, reason, candidate.size, candidate.mtime_ns)

        if candidate.problem:
            skip(candidate.problem)
            return None
        limit = self.config.max_file_bytes
        if candidate.size > limit:
            skip(f"larger than max_file_bytes ({candidate.size} > {limit} bytes)")
            return None
        try:
            with open(candidate.abs_path, "rb") as handle:
                data = handle.read(limit + 1)
        except FileNotFoundError:
            return None  # deleted between listing and reading: the next scan drops it
        except OSError as exc:
            skip(f"cannot read: {exc.strerror or exc}")
            return None
        if len(data) > limit:
            skip(f"larger than max_file_bytes (> {limit} bytes)")
            return None
        digest = _file_hash(data)
        if not force and row is not None and row.hash == digest and row.error is None:
            self.store.touch(rel, candidate.size, candidate.mtime_ns)
            return None
        if b"\x00" in data:
            skip("binary file (contains NUL bytes)")
            return None
        warning = None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8-sig", errors="replace")
            warning = f"invalid UTF-8 at byte {exc.start}; undecodable bytes were replaced"
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        try:
            note = parse_note(rel, text)
            chunks = self.chunker.chunk(note)
        except Exception as exc:  # a parser bug must cost one file, never the run
            log.exception("cannot parse %s", rel)
            skip(f"cannot parse: {type(exc).__name__}: {exc}")
            return None
        warnings = [w for w in (warning, note.warning) if w]
        occurrences: dict[str, int] = {}
        records = []
        for ordinal, chunk in enumerate(chunks):
            seen = occurrences.get(chunk.hash, 0)
            occurrences[chunk.hash] = seen + 1
            records.append(
                ChunkRecord(
                    chunk_id=_chunk_id(rel, chunk.hash, seen), ord=ordinal, hash=chunk.hash,
                    start_line=chunk.start_line, end_line=chunk.end_line,
                    breadcrumb=chunk.breadcrumb, body=chunk.body,
                )
            )
        texts = {chunk.hash: chunk.text for chunk in chunks}
        record = NoteRecord(
            path=rel, hash=digest, size=candidate.size, mtime_ns=candidate.mtime_ns, title=note.title,
            kind=note.kind, note_type=note.note_type, aliases=note.aliases, tags=note.tags,
            links=note.links, chunks=records, warning="; ".join(warnings) or None,
        )
        if record.warning:
            report.skipped.append(Skipped(rel, f"indexed with a problem: {record.warning}"))
        return _Prepared(record, texts)

    # -- search ------------------------------------------------------------------------------
    def semantic_ready(self) -> bool:
        return self.embedder.loaded or self.load_model_on_demand

    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        mode: str | None = None,
        filters: Filters | None = None,
        group_by_file: bool = False,
    ) -> SearchResult:
        """Hits for `query` (which may carry `tag:`, `path:`, `type:` terms), best first."""
        started = time.perf_counter()
        limit = self.config.search.limit if limit is None else limit
        mode = mode or self.config.search.mode
        if mode not in MODES:
            raise QueryError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        if not 1 <= limit <= 200:
            raise QueryError(f"limit must be from 1 to 200, not {limit}")
        parsed = parse_query(query, filters)
        if mode != "lexical" and not self.semantic_ready():
            mode = "lexical"
        hits = self._search(parsed, limit, mode, group_by_file)
        return SearchResult(hits, mode, (time.perf_counter() - started) * 1000)

    def _search(self, parsed: ParsedQuery, limit: int, mode: str, group_by_file: bool) -> list[Hit]:
        if not parsed.text.strip():
            if parsed.filters.empty:
                return []
            # Only filters (`tag:rust`): list the matching notes, by path.
            rowids = self.store.first_chunks_matching(parsed.filters, limit)
            return self._hits([(rowid, 0.0, Signals()) for rowid in rowids], limit, False, [])
        wanted = max(limit * CANDIDATES_PER_HIT * (3 if group_by_file else 1), MIN_CANDIDATES)
        semantic: list[tuple[int, float]] = []
        lexical: list[tuple[int, float]] = []
        if mode in ("hybrid", "semantic"):
            semantic = self._semantic(self.embedder.embed_query(parsed.text), wanted, parsed.filters)
        if mode in ("hybrid", "lexical"):
            match = fts_match(parsed.text, self._costly_stopwords(parsed.text))
            if match:
                lexical = [(rowid, -bm25) for rowid, bm25 in self.store.lexical(match, parsed.filters, wanted)]
        if mode == "semantic":
            scored = [(rowid, score, Signals(semantic=i + 1)) for i, (rowid, score) in enumerate(semantic)]
        elif mode == "lexical":
            scored = [(rowid, score, Signals(lexical=i + 1)) for i, (rowid, score) in enumerate(lexical)]
        else:
            scored = self._fuse(semantic, lexical)
        return self._hits(scored, limit, group_by_file, query_terms(parsed.text))

    def _costly_stopwords(self, text: str) -> set[str]:
        """Function words of the query that match more than STOPWORD_MAX_CHUNKS chunks: scoring
        them would dominate the lexical query's cost while BM25 gives them next to no weight."""
        candidates = [t for t in query_terms(text) if t in STOPWORDS]
        if not candidates:
            return set()
        counts = self.store.term_doc_counts(candidates)
        return {t for t in candidates if counts.get(t, 0) > STOPWORD_MAX_CHUNKS}

    def _semantic(self, vector: np.ndarray, wanted: int, filters: Filters) -> list[tuple[int, float]]:
        allowed = None if filters.empty else self.store.allowed_embeddings(filters)
        if allowed is not None and not len(allowed):
            return []
        nearest = self.vectors.top(vector, wanted, allowed)
        score_of = dict(nearest)
        pairs = self.store.chunks_for_embeddings([e for e, _ in nearest], filters)
        ranked = sorted(((rowid, score_of[e]) for e, rowid in pairs), key=lambda p: (-p[1], p[0]))
        return ranked[:wanted]

    def _fuse(self, semantic: list[tuple[int, float]], lexical: list[tuple[int, float]]) -> list[tuple[int, float, Signals]]:
        """Reciprocal rank fusion: score = sum over rankings of weight / (k + rank)."""
        cfg = self.config.search
        fused: dict[int, float] = {}
        sem_rank = {rowid: i + 1 for i, (rowid, _) in enumerate(semantic)}
        lex_rank = {rowid: i + 1 for i, (rowid, _) in enumerate(lexical)}
        for rowid, rank in sem_rank.items():
            fused[rowid] = fused.get(rowid, 0.0) + cfg.semantic_weight / (cfg.rrf_k + rank)
        for rowid, rank in lex_rank.items():
            fused[rowid] = fused.get(rowid, 0.0) + cfg.lexical_weight / (cfg.rrf_k + rank)
        order = sorted(fused.items(), key=lambda p: (-p[1], p[0]))
        return [(rowid, score, Signals(sem_rank.get(rowid), lex_rank.get(rowid))) for rowid, score in order]

    def _hits(self, scored: list[tuple[int, float, Signals]], limit: int, group_by_file: bool, terms: list[str]) -> list[Hit]:
        chosen: list[tuple[int, float, Signals, int]] = []
        if group_by_file:
            rows = self.store.chunk_rows([rowid for rowid, _, _ in scored])
            by_path: dict[str, int] = {}
            for rowid, score, signals in scored:
                if rowid not in rows:
                    continue  # rewritten by the indexer since it was ranked
                path = rows[rowid]["path"]
                if path in by_path:
                    chosen[by_path[path]] = (*chosen[by_path[path]][:3], chosen[by_path[path]][3] + 1)
                    continue
                by_path[path] = len(chosen)
                chosen.append((rowid, score, signals, 0))
            chosen = chosen[:limit]
        else:
            chosen = [(rowid, score, signals, 0) for rowid, score, signals in scored[:limit]]
            rows = self.store.chunk_rows([c[0] for c in chosen])
        hits = []
        for rowid, score, signals, more in chosen:
            row = rows.get(rowid)
            if row is None:
                continue  # the indexer rewrote this file between the ranking and this read
            hits.append(
                Hit(
                    path=row["path"], start_line=row["start_line"], end_line=row["end_line"],
                    title=row["title"], breadcrumb=row["breadcrumb"],
                    snippet=make_snippet(row["body"], terms), score=round(float(score), 6),
                    signals=signals, more=more, root=str(self.root),
                )
            )
        return hits

    # -- related notes -----------------------------------------------------------------------
    def related(self, path: Path, line: int | None = None, *, limit: int = 10) -> list[Hit]:
        """Notes near `path` (or the section at `line`) by meaning, links and tags; never itself."""
        rel = self.scanner.relative(path)
        info = self.store.file_info(rel)
        if info is None:
            return []
        chunks = self.store.file_chunks(rel)
        source = chunks
        if line is not None and chunks:
            inside = [c for c in chunks if c["start_line"] <= line <= c["end_line"]]
            source = inside[:1] or [min(chunks, key=lambda c: abs(c["start_line"] - line))]
        candidates: dict[int, dict[str, Any]] = {}  # file_id -> {score, rowid, reasons}
        if source:
            vectors = self.vectors.vectors([c["embedding_id"] for c in source])
            if len(vectors):
                query = vectors.mean(axis=0)
                query /= max(float(np.linalg.norm(query)), 1e-12)
                nearest = self.vectors.top(query, max(limit * 20, 200))
                score_of = dict(nearest)
                pairs = self.store.chunks_for_embeddings([e for e, _ in nearest], Filters())
                rows = self.store.chunk_rows([rowid for _, rowid in pairs])
                for embedding_id, rowid in pairs:
                    row = rows.get(rowid)
                    if row is None:
                        continue  # rewritten by the indexer meanwhile
                    score = score_of[embedding_id]
                    if row["file_id"] == info["id"] or score < RELATED_MIN_SIMILARITY:
                        continue
                    best = candidates.get(row["file_id"])
                    if best is None or score > best["similarity"]:
                        candidates[row["file_id"]] = {
                            "similarity": score, "rowid": rowid, "section": row["breadcrumb"],
                        }
        outgoing = self.store.outgoing_links(info["id"])
        links_to = self.store.resolve_link_targets(
            [t for k, t in outgoing if k == "path"], [t for k, t in outgoing if k == "wiki"]
        )
        stem = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        names = {stem, rel, rel.rsplit(".", 1)[0], info["title"], *info["aliases"]}
        linked_from = self.store.incoming_links(rel, sorted(names))
        shared = self.store.files_sharing_tags(info["id"])
        extra_ids = (links_to | linked_from | set(shared)) - set(candidates) - {info["id"]}
        for file_id, rowid in self.store.first_chunk_of_files(extra_ids).items():
            candidates[file_id] = {"similarity": 0.0, "rowid": rowid, "section": ""}
        scored = []
        for file_id, cand in candidates.items():
            reasons = []
            score = cand["similarity"]
            if cand["similarity"] > 0:
                reasons.append(f"similar to § {cand['section']} ({cand['similarity']:.2f})")
            if file_id in links_to:
                score += 0.15
                reasons.append("linked from here")
            if file_id in linked_from:
                score += 0.15
                reasons.append("links here")
            if file_id in shared:
                score += 0.05 * min(len(shared[file_id]), 3)
                reasons.append("shared tags: " + ", ".join(sorted(shared[file_id])))
            scored.append((score, cand["rowid"], reasons))
        scored.sort(key=lambda s: (-s[0], s[1]))
        scored = scored[:limit]
        rows = self.store.chunk_rows([rowid for _, rowid, _ in scored])
        hits = []
        for score, rowid, reasons in scored:
            row = rows.get(rowid)
            if row is None:
                continue
            hits.append(
                Hit(
                    path=row["path"], start_line=row["start_line"], end_line=row["end_line"],
                    title=row["title"], breadcrumb=row["breadcrumb"], snippet=make_snippet(row["body"], []),
                    score=round(score, 6), reasons=reasons, root=str(self.root),
                )
            )
        return hits

    # -- status ------------------------------------------------------------------------------
    def status(self) -> RootStatus:
        counts = self.store.counts()
        return RootStatus(
            root=str(self.root), store=str(self.store_dir), store_bytes=self.store.size_bytes(),
            files=counts["files"], chunks=counts["chunks"], vectors=counts["vectors"],
            model=self.embedder.model_id, dimension=self.embedder.dimension,
            sqlite=SqliteInfo(**self.store.sqlite_info()),
            errors=[Skipped(p, e) for p, e in self.store.errors()],
        )


class _Prepared:
    __slots__ = ("record", "texts")

    def __init__(self, record: NoteRecord, texts: dict[str, str]) -> None:
        self.record = record
        self.texts = texts


class _Batch:
    """Groups parsed notes so the model sees full batches across files, then writes each note
    in its own transaction."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.notes: list[_Prepared] = []
        self.missing: dict[str, str] = {}  # chunk hash -> text to embed

    @property
    def full(self) -> bool:
        return len(self.missing) >= self.engine.config.model.batch_size * 4 or len(self.notes) >= 256

    def add(self, prepared: _Prepared) -> None:
        self.notes.append(prepared)
        new = [h for h in prepared.texts if h not in self.missing]
        stored = self.engine.store.known_embeddings(new)
        for h in new:
            if h not in stored:
                self.missing[h] = prepared.texts[h]

    def flush(self, report: IndexReport) -> None:
        if not self.notes:
            return
        # Similar lengths in one model batch waste less padding.
        hashes = sorted(self.missing, key=lambda h: len(self.missing[h]))
        vectors: dict[str, np.ndarray] = {}
        if hashes:
            embedded = self.engine.embedder.embed_passages([self.missing[h] for h in hashes])
            vectors = dict(zip(hashes, embedded))
            report.embedded += len(hashes)
        for prepared in self.notes:
            written, _ = self.engine.store.write_note(prepared.record, vectors)
            report.changed += 1
            report.reused += written
        report.reused -= len(hashes)
        self.notes.clear()
        self.missing.clear()
