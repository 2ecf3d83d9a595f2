"""What the daemon takes and hands its front end: typed requests, answers, and the listener.

The daemon knows no wire format: these are plain structs over the engine's results
(`kbls.results`); `kbls.lsp.convert` turns them into `kb/*` wire structs and LSP types.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from kbls.errors import BeingReopenedError
from kbls.limits import Mode, State
from kbls.query.filters import Filters
from kbls.results import Hit, NoteSummary, RootStatus, TagCount

log = logging.getLogger(__name__)

T = TypeVar("T")


class StoreUnavailableError(BeingReopenedError):
    """A root's store vanished under the daemon and is being rebuilt; the request may be retried."""


@dataclass(frozen=True)
class SearchRequest:
    query: str
    #: None: the first root's `search.limit`.
    limit: int | None = None
    #: None: each root's `search.mode`.
    mode: Mode | None = None
    filters: Filters | None = None
    group_by_file: bool = False
    #: each hit carries each signal's score and weight (`Hit.explain`).
    explain: bool = False
    #: with group_by_file: the note's other sections carry their snippet.
    section_snippets: bool = False


@dataclass(frozen=True)
class IndexState:
    """The index as a whole (the `kb/indexStatus` notification, `index` of a search answer)."""

    state: State
    pending: int
    files: int = 0
    chunks: int = 0
    #: the file being indexed, or a word on what happens.
    message: str = ""
    #: why the state is `error` (every failing root's reason); None otherwise.
    error: str | None = None
    #: chunks whose text waits for its vector (lexical first: found by words, not yet by meaning)
    waiting: int = 0
    #: chunks embedded per second lately (0: nothing embedded lately)
    rate: float = 0.0
    #: every note is written with its links and tags (no scan or save left; vectors may still be
    #: coming): link diagnostics and backlink counts are right from here on. Not on the wire.
    links_settled: bool = False

    @property
    def eta_s(self) -> float | None:
        """Seconds until every chunk has its vector at `rate`; None when unknown, 0 when none waits."""
        if not self.waiting:
            return 0.0
        return self.waiting / self.rate if self.rate > 0 else None

    @property
    def embedded(self) -> float:
        """The share of the chunks with their vector (1.0: semantic answers cover every note)."""
        return 1.0 if self.chunks <= 0 else max(0.0, min(1.0, 1 - self.waiting / self.chunks))


@dataclass(frozen=True)
class FromRoot:
    """The root an item of an answer came from."""

    root_uri: str
    #: the root's folder as the client names it: the item's file is `folder / item.path`.
    folder: Path


@dataclass(frozen=True)
class InRoot(Generic[T]):
    """An engine's answer about a note (`Daemon.in_root`), with its root's folder as the client
    named it (answers hold root-relative paths: URIs are made of both)."""

    root_uri: str
    folder: Path
    answer: T


@dataclass(frozen=True)
class RootHit(FromRoot):
    """An engine hit and the root it came from."""

    hit: Hit


@dataclass(frozen=True)
class SearchAnswer:
    hits: list[RootHit]
    took_ms: float
    index: IndexState


@dataclass(frozen=True)
class NotesRequest:
    """`kb/notes`: a page of the notes, most recently modified first."""

    #: None: the first root's `search.limit`.
    limit: int | None = None
    offset: int = 0
    filters: Filters | None = None


@dataclass(frozen=True)
class RootNote(FromRoot):
    """A note of a listing and the root it came from."""

    note: NoteSummary


@dataclass(frozen=True, kw_only=True)
class Page:
    """A listing cut to its limit: how long it is uncut, and the state of the index it came from."""

    #: notes: how many the filters keep in all the roots; tags: how many match the prefix.
    total: int
    index: IndexState


@dataclass(frozen=True, kw_only=True)
class NotesAnswer(Page):
    notes: list[RootNote]


@dataclass(frozen=True, kw_only=True)
class TagsAnswer(Page):
    """Tags counted over every root asked, most used first."""

    tags: list[TagCount]


@dataclass(frozen=True)
class RootReport:
    uri: str
    status: RootStatus
    error: str | None


@dataclass(frozen=True)
class DaemonStatus:
    version: str
    index: IndexState
    model: str
    dimension: int
    embedded_since_start: int
    reused_since_start: int
    roots: list[RootReport]


class Listener(Protocol):
    """What the daemon tells its front end. Called from the worker, watcher and LSP threads;
    an implementation must only hand the call over (e.g. to an event loop), never block."""

    def index_status(self, status: IndexState) -> None: ...
    def progress_begin(self, title: str, message: str) -> object: ...
    def progress_report(self, handle: object, percentage: int, message: str) -> None: ...
    def progress_end(self, handle: object, message: str) -> None: ...
    def log_message(self, level: int, message: str) -> None: ...
    def show_message(self, level: int, message: str) -> None: ...


class NullListener:
    """A listener that only logs (benchmarks, unit tests)."""

    def index_status(self, status: IndexState) -> None:
        pass

    def progress_begin(self, title: str, message: str) -> object:
        return None

    def progress_report(self, handle: object, percentage: int, message: str) -> None:
        pass

    def progress_end(self, handle: object, message: str) -> None:
        pass

    def log_message(self, level: int, message: str) -> None:
        log.log(level, "%s", message)

    def show_message(self, level: int, message: str) -> None:
        log.log(level, "%s", message)


class SafeListener:
    """The listener with every call guarded: the front end failing must not stop indexing."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener

    def index_status(self, status: IndexState) -> None:
        with _logged("index_status"):
            self._listener.index_status(status)

    def progress_begin(self, title: str, message: str) -> object:
        handle: object = None  # what a failed begin gives
        with _logged("progress_begin"):
            handle = self._listener.progress_begin(title, message)
        return handle

    def progress_report(self, handle: object, percentage: int, message: str) -> None:
        with _logged("progress_report"):
            self._listener.progress_report(handle, percentage, message)

    def progress_end(self, handle: object, message: str) -> None:
        with _logged("progress_end"):
            self._listener.progress_end(handle, message)

    def log(self, level: int, message: str) -> None:
        with _logged("log_message"):
            self._listener.log_message(level, message)

    def show(self, level: int, message: str) -> None:
        with _logged("show_message"):
            self._listener.show_message(level, message)


@contextmanager
def _logged(call: str) -> Iterator[None]:
    """A listener call's exception logged and swallowed."""
    try:
        yield
    except Exception:
        log.exception("listener: %s failed", call)
