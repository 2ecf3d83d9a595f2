"""Typed results of the engine, shared by the CLI, the daemon and the tests."""

from __future__ import annotations

import msgspec


class Signals(msgspec.Struct, frozen=True):
    """1-based rank of a chunk in each ranking that found it (None: not found by that one)."""

    semantic: int | None = None
    lexical: int | None = None


class Section(msgspec.Struct, kw_only=True, frozen=True):
    """Another section of a hit's note that matched (with group_by_file), to expand in place."""

    start_line: int  # 0-based, inclusive
    end_line: int  # 0-based, inclusive
    breadcrumb: str
    #: "" unless the search asked for it (`section_snippets`)
    snippet: str
    score: float


class Explain(msgspec.Struct, frozen=True, kw_only=True):
    """Why a hit ranked where it did (`kbls search --explain`, `kb/search` `explain`): each
    signal's evidence (0..1) and its weight for this query; score = semantic × semantic_weight
    + lexical × lexical_weight + the note's further sections' share (`sections`)."""

    semantic: float
    semantic_weight: float
    lexical: float
    lexical_weight: float
    #: the raw cosine similarity to the query (None: not measured, lexical mode).
    cosine: float | None = None
    #: IDF-weighted share of the query's content words the hit holds (None: semantic mode).
    coverage: float | None = None
    #: the hit's BM25 relative to the query's best (None: no lexical match).
    bm25_share: float | None = None
    #: with group_by_file: what the note's other matching sections added to its score.
    sections: float = 0.0

    def describe(self) -> str:
        """One line for a person: `semantic 0.62 × 0.75 + lexical 0.40 × 0.25 (cosine 0.47, …)`."""
        parts = [
            f"semantic {self.semantic:.2f} × {self.semantic_weight:.2f}",
            f"lexical {self.lexical:.2f} × {self.lexical_weight:.2f}",
        ]
        if self.sections:
            parts.append(f"other sections {self.sections:.3f}")
        measured = (("cosine", self.cosine), ("coverage", self.coverage), ("bm25 share", self.bm25_share))
        raw = [f"{name} {value:.2f}" for name, value in measured if value is not None]
        return " + ".join(parts) + (f"  ({', '.join(raw)})" if raw else "")


class Hit(msgspec.Struct, kw_only=True):
    path: str  # posix, relative to the root
    start_line: int  # 0-based, inclusive
    end_line: int  # 0-based, inclusive
    title: str
    breadcrumb: str
    snippet: str
    score: float
    signals: Signals = msgspec.field(default_factory=Signals)
    reasons: list[str] = msgspec.field(default_factory=list)
    #: with group_by_file: further hits of the same file folded into this one.
    more: int = 0
    #: with group_by_file: the best of those (`MAX_SECTIONS`), best first.
    sections: list[Section] = msgspec.field(default_factory=list)
    root: str = ""  # absolute root path; filled by the engine
    #: each signal's score and weight, when asked for (`explain`).
    explain: Explain | None = None


class Skipped(msgspec.Struct, frozen=True):
    path: str
    reason: str


class IndexReport(msgspec.Struct, kw_only=True):
    files: int = 0  # files indexed in the store after the run
    chunks: int = 0  # chunks in the store after the run
    scanned: int = 0  # files looked at
    changed: int = 0  # files (re)written
    deleted: int = 0
    embedded: int = 0  # chunk texts given to the model
    reused: int = 0  # chunks whose vector was already stored
    pending: int = 0  # chunks in the store still waiting for their vectors after the run
    skipped: list[Skipped] = msgspec.field(default_factory=list)
    seconds: float = 0.0
    busy: bool = False  # another process held the writer lock


class SqliteInfo(msgspec.Struct, frozen=True):
    module: str
    version: str
    vec: str


class RootStatus(msgspec.Struct, kw_only=True):
    root: str
    store: str
    store_bytes: int
    files: int
    chunks: int
    vectors: int
    model: str
    dimension: int
    sqlite: SqliteInfo
    errors: list[Skipped]


class TagCount(msgspec.Struct, frozen=True):
    """A tag (lowercase, no `#`) and how many indexed notes carry it (`kb/tags`)."""

    name: str
    count: int


class NoteSummary(msgspec.Struct, frozen=True):
    """A note as a listing shows it (`kb/notes`)."""

    path: str
    title: str
    #: the file's modification time when it was indexed, in nanoseconds since the epoch.
    modified_ns: int
    tags: list[str]
    #: the first lines of prose of its first chunk, on one line.
    snippet: str
