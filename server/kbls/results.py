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
    snippet: str
    score: float


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
