"""The indexing pipeline of one root: scan, read, hash, parse, chunk, write, embed what is new.

The file hash decides whether a file is parsed, the chunk hash whether a chunk is embedded:
vectors are content-addressed, so a moved or renamed note re-embeds nothing. Each note is
written in its own transaction.

Lexical first: a full scan (a first index, a rebuild) or a large batch of files writes every
note's chunks, FTS rows, links and tags with its new chunk texts marked pending, then embeds them
(`kbls.indexing.embed_pass`), so every note is found by its words and names within the scan's
time, long before the model is through. A few files (a save) are written the same way and their
new chunk texts embedded right after, in the same run: a saved note is found by its words as
soon as it is written (the model call, the largest part of a save, no longer stands before
that) and by meaning a model batch later, and its texts leave the queue ahead of the backlog.
A store that is not lexical first (the team store) embeds before it writes.

A full scan also re-reads every file when the store's chunking fingerprint (meta `chunking`) is
not this chunker's (`Chunker.fingerprint`: a new parser/chunker version or other chunk
settings), and records the new one once the scan completes; chunk texts that did not change keep
their vectors.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kbls.config import Config
from kbls.errors import OutsideRootError
from kbls.hashing import content_hash
from kbls.indexing.chunk import Chunker
from kbls.indexing.embed import Embedder
from kbls.indexing.embed_pass import LONG_STEP_BATCHES, embed_pending, embed_texts
from kbls.indexing.formats.documents import read_document
from kbls.indexing.formats.errors import DocumentError
from kbls.indexing.giveway import READS
from kbls.indexing.progress import IndexProgress, ProgressFn, Tracker
from kbls.indexing.scan import NOT_REGULAR, Candidate, Scanner
from kbls.indexing.text import read_regular
from kbls.results import IndexReport, Skipped
from kbls.storage.records import ChunkRecord, FileRow, NoteRecord
from kbls.storage.roles import Backend

log = logging.getLogger(__name__)


__all__ = ["INLINE_FILES", "IndexPipeline", "IndexProgress", "PreparedNote", "ProgressFn"]

#: a run of at most this many files (a save, a few watcher events) embeds its own new texts
#: right after writing them, whatever `embed` says; larger runs and full scans leave them to the
#: embedding pass
INLINE_FILES = 16


def file_hash(data: bytes) -> str:
    return content_hash(data)


def chunk_id(path: str, chunk_hash: str, occurrence: int) -> str:
    return content_hash(f"{path}\0{chunk_hash}\0{occurrence}".encode(), digest_bytes=10)


@dataclass(frozen=True)
class PreparedNote:
    """A note parsed and chunked, ready to write once its new chunk texts are embedded."""

    record: NoteRecord
    #: chunk hash -> the text the model embeds.
    texts: dict[str, str]


class IndexPipeline:
    """Brings one root's store up to date with the disk. One run at a time per pipeline."""

    def __init__(self, config: Config, store: Backend, scanner: Scanner, chunker: Chunker, embedder: Embedder) -> None:
        self.config = config
        self.store = store
        self.scanner = scanner
        self.chunker = chunker
        self.embedder = embedder
        #: since this pipeline started: texts embedded, chunks whose vector was reused.
        self.embedded_total = 0
        self.reused_total = 0
        self._lock = threading.Lock()

    def run(
        self,
        paths: Iterable[Path] | None = None,
        *,
        force: bool = False,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        wait: bool = True,
        embed: bool = True,
    ) -> IndexReport:
        """Bring the store up to date with the disk: every file (paths=None) or just `paths`.

        :param force: re-read files whose size and mtime did not change (never re-embeds a
            chunk whose vector is stored).
        :param wait: when False and another process is writing this store, return at once
            with `busy=True`.
        :param embed: embed what the lexical pass wrote before returning; False leaves it
            pending for `embed_pending` (the daemon, which answers searches meanwhile).
        """
        listed = None if paths is None else list(paths)
        return self._locked(lambda: self._run_locked(listed, force, progress, cancel, embed), wait)

    def embed_pending(
        self,
        *,
        first: Callable[[], Sequence[str]] | None = None,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        wait: bool = True,
        budget_s: float | None = None,
    ) -> IndexReport:
        """Embed the chunk texts written without vectors: those of the notes `first()` names
        (root-relative paths) first, then the most recently modified notes'. Stops when none is
        left, at `cancel` or after `budget_s` seconds; `report.pending` tells what is left."""

        def run() -> IndexReport:
            report = IndexReport()
            tracker = Tracker(progress, 0)
            report.embedded = embed_pending(
                self.store, self.embedder, self.config.model.batch_size, tracker, first=first, cancel=cancel,
                budget_s=budget_s,
            )
            self.embedded_total += report.embedded
            return report

        return self._locked(run, wait)

    def _locked(self, work: Callable[[], IndexReport], wait: bool) -> IndexReport:
        """`work` under this pipeline's lock and the store's writer lock."""
        started = time.perf_counter()
        with self._lock:
            with self.store.lock.hold(timeout=0.0) as held:
                if held:
                    report = work()
            if not held:
                if not wait:
                    return IndexReport(busy=True, seconds=time.perf_counter() - started)
                # Unbounded, so say why: `kbls index` sat silent while a daemon indexed (or a
                # `kbls index` stopped with Ctrl+Z held the lock), and looked hung.
                log.warning(
                    "another kbls process is writing the store %s (an editor's kbls indexing, or "
                    "another `kbls index`); waiting for it to finish", self.store.location,
                )
                with self.store.lock.hold(timeout=None):
                    report = work()
        counts = self.store.counts()
        report.files, report.chunks, report.pending = counts.files, counts.chunks, counts.waiting
        report.seconds = time.perf_counter() - started
        return report

    def _run_locked(
        self, paths: list[Path] | None, force: bool, progress: ProgressFn | None, cancel: threading.Event | None,
        embed: bool,
    ) -> IndexReport:
        report = IndexReport()
        gone: list[str] = []
        fingerprint = self.chunker.fingerprint
        recorded = self.store.chunking() if paths is None else fingerprint
        if paths is None:
            known = self.store.files()
            if known and recorded != fingerprint and not force:
                # Unchanged files would keep chunks another parser/chunker or other settings made.
                # A warning so that `kbls index` (which shows warnings only) says why it re-reads.
                log.warning(
                    "chunking changed since this store was built: re-reading every note "
                    "(store %s: %s, now %s)", self.store.location, recorded or "unrecorded", fingerprint,
                )
                force = True
            candidates = self.scanner.walk()
            on_disk = {c.rel_path for c in candidates}
            # A folder that could not be listed (permissions, an I/O error) keeps its notes.
            gone = sorted(p for p in known if p not in on_disk and not self.scanner.under_unlisted(p))
            for folder, reason in self.scanner.unlisted.items():
                log.warning("cannot list %s: %s; its notes stay as last indexed", folder or "the root", reason)
                report.skipped.append(Skipped(f"{folder}/" if folder else "./", f"{UNLISTABLE}: {reason}"))
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
        work = [c for c in candidates if force or _changed(c, known.get(c.rel_path), self.config.size_cap(c.rel_path)[1])]
        tracker = Tracker(progress, len(work))
        inline = paths is not None and len(work) <= INLINE_FILES
        batch = _Batch(self, tracker, lexical=self.store.lexical_first)
        for done, candidate in enumerate(work, 1):
            if cancel is not None and cancel.is_set():
                break
            READS.give_way()
            prepared = self._prepare(candidate, known.get(candidate.rel_path), force, report)
            if prepared is not None:
                batch.add(prepared)
                if batch.full:
                    batch.flush(report)
            tracker.looked_at(done, candidate.rel_path)
        batch.flush(report)
        if inline and batch.lexical and (cancel is None or not cancel.is_set()):
            report.embedded += self._embed_written(batch.written, tracker, cancel)
        if cancel is None or not cancel.is_set():
            for rel in gone:
                if self.store.delete_file(rel):
                    report.deleted += 1
            if paths is None:
                self.store.collect_garbage()
                if recorded != fingerprint:  # only now: an interrupted run must redo it
                    self.store.record_chunking(fingerprint)
            if embed and batch.lexical and not inline:
                report.embedded += embed_pending(
                    self.store, self.embedder, self.config.model.batch_size, tracker, cancel=cancel,
                    step_batches=LONG_STEP_BATCHES,
                )
        self.embedded_total += report.embedded
        self.reused_total += report.reused
        return report

    def _embed_written(self, texts: dict[str, str], tracker: Tracker, cancel: threading.Event | None) -> int:
        """Embed the texts of `texts` (hash -> model text) still pending, a model batch at a time;
        returns how many were embedded. Progress counts them (the rate) but does not switch to
        embedding: the root's backlog is the embedding pass's to tell."""
        waiting = self.store.known_embeddings(texts, pending=True) - self.store.known_embeddings(texts)
        done, _ = embed_texts(
            self.store, self.embedder, {h: texts[h] for h in waiting}, self.config.model.batch_size, tracker,
            lambda: cancel is not None and cancel.is_set(),
        )
        return done

    def _prepare(self, candidate: Candidate, row: FileRow | None, force: bool, report: IndexReport) -> PreparedNote | None:
        """Read, hash, parse and chunk one file; None when nothing needs writing."""
        rel = candidate.rel_path

        def skip(reason: str) -> None:
            log.info("skipping %s: %s", rel, reason)
            report.skipped.append(Skipped(rel, reason))
            self.store.record_problem(rel, reason, candidate.size, candidate.mtime_ns)

        if candidate.problem:
            skip(candidate.problem)
            return None
        setting, limit = self.config.size_cap(rel)
        if candidate.size > limit:
            skip(f"{TOO_LARGE}{setting.removeprefix('max_')} ({candidate.size} > {limit} bytes)")
            return None
        try:
            data = read_regular(candidate.abs_path, limit + 1)
        except FileNotFoundError:
            return None  # deleted between listing and reading: the next scan drops it
        except OSError as exc:
            skip(f"{UNREADABLE}: {exc.strerror or exc}")
            return None
        if data is None:  # replaced by a FIFO or a device since it was listed
            skip(NOT_REGULAR)
            return None
        if len(data) > limit:
            skip(f"{TOO_LARGE}{setting.removeprefix('max_')} (> {limit} bytes)")
            return None
        digest = file_hash(data)
        if not force and row is not None and row.hash == digest and row.error is None:
            self.store.touch(rel, candidate.size, candidate.mtime_ns)
            return None
        try:  # text decoded and parsed; a PDF or web page through its extractor
            note = read_document(rel, data).note
            chunks = self.chunker.chunk(note)
        except DocumentError as exc:  # binary, a scanned PDF: the reason is the user's to read
            skip(str(exc))
            return None
        except Exception as exc:  # a parser bug must cost one file, never the run
            log.exception("cannot parse %s", rel)
            skip(f"{UNPARSABLE}: {type(exc).__name__}: {exc}")
            return None
        warnings = [note.warning] if note.warning else []
        occurrences: dict[str, int] = {}
        records = []
        for ordinal, chunk in enumerate(chunks):
            seen = occurrences.get(chunk.hash, 0)
            occurrences[chunk.hash] = seen + 1
            records.append(
                ChunkRecord(
                    chunk_id=chunk_id(rel, chunk.hash, seen), ord=ordinal, hash=chunk.hash,
                    start_line=chunk.start_line, end_line=chunk.end_line,
                    breadcrumb=chunk.breadcrumb, body=chunk.body,
                )
            )
        record = NoteRecord(
            path=rel, hash=digest, size=candidate.size, mtime_ns=candidate.mtime_ns, title=note.title,
            kind=note.kind, note_type=note.note_type, aliases=note.aliases, tags=note.tags,
            links=note.links, chunks=records, warning="; ".join(warnings) or None, spans=note.spans,
        )
        if record.warning:
            report.skipped.append(Skipped(rel, f"indexed with a problem: {record.warning}"))
        return PreparedNote(record, {chunk.hash: chunk.text for chunk in chunks})


#: how the skip reasons that no edit of the file may undo begin (see `_changed`); the size cap's
#: goes on with its setting's name: `larger than max_file_bytes`, `larger than max_pdf_bytes`.
TOO_LARGE = "larger than max_"
UNREADABLE = "cannot read"
#: a folder the walk could not list: its files are kept as they were indexed.
UNLISTABLE = "cannot list this folder; its notes stay as last indexed"
#: a parser bug: retried at each full scan, so a kbls upgrade that fixes it indexes the note.
UNPARSABLE = "cannot parse"


def _changed(candidate: Candidate, row: FileRow | None, max_file_bytes: int) -> bool:
    """Whether a listed file must be read again (not only re-stat'ed)."""
    if row is None or candidate.problem:
        return True
    if row.size != candidate.size or row.mtime_ns != candidate.mtime_ns:
        return True
    # Decisions that leave the file's size and mtime alone: `max_file_bytes` changed since the
    # file was skipped as too large (or indexed under a larger limit), its permissions did
    # (chmod keeps the mtime), or kbls did (a parser error fixed since).
    error = row.error or ""
    if error.startswith(TOO_LARGE):
        return candidate.size <= max_file_bytes
    return error.startswith((UNREADABLE, UNPARSABLE)) or (not error and candidate.size > max_file_bytes)


@dataclass
class _Batch:
    """Parsed notes waiting to be written, and (embedding before writing) the chunk texts of
    theirs with no vector yet; `lexical`: written at once, new texts marked pending."""

    pipeline: IndexPipeline
    tracker: Tracker
    lexical: bool
    notes: list[PreparedNote] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)  # chunk hash -> text to embed
    #: lexical: chunk hash -> model text of every note written so far (a small run embeds them after)
    written: dict[str, str] = field(default_factory=dict)

    @property
    def full(self) -> bool:
        return self.lexical or len(self.missing) >= self.pipeline.config.model.batch_size * 4 or len(self.notes) >= 256

    def add(self, prepared: PreparedNote) -> None:
        self.notes.append(prepared)
        self.tracker.waiting += 1
        if self.lexical:
            self.written.update(prepared.texts)
            return
        new = [h for h in prepared.texts if h not in self.missing]
        stored = self.pipeline.store.known_embeddings(new)  # a pending text is embedded here
        for h in new:
            if h not in stored:
                self.missing[h] = prepared.texts[h]

    def flush(self, report: IndexReport) -> None:
        if not self.notes:
            return
        # Similar lengths in one model batch waste less padding.
        hashes = sorted(self.missing, key=lambda h: len(self.missing[h]))
        vectors: dict[str, np.ndarray] = {}
        # One model batch at a time, so that progress moves while a large flush embeds.
        step = self.pipeline.config.model.batch_size
        for start in range(0, len(hashes), step):
            part = hashes[start : start + step]
            embedded = self.pipeline.embedder.embed_passages([self.missing[h] for h in part])
            vectors.update(zip(part, embedded, strict=True))
            self.tracker.embedded(len(part))
        report.embedded += len(hashes)
        for prepared in self.notes:
            written, added, waiting = self.pipeline.store.write_note(prepared.record, vectors, prepared.texts)
            report.changed += 1
            report.reused += written - added - waiting
        self.tracker.written(len(self.notes), tell=not self.lexical)  # lexical: told as each file is looked at
        self.notes.clear()
        self.missing.clear()
