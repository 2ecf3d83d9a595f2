"""Wire types of the `kb/*` protocol (docs/protocol.md, docs/protocol.schema.json), shared with the tests.

Every struct is camelCase on the wire. Params arrive from pygls as nested namedtuples (its
fallback for unknown methods); `parse` turns them back into plain data and validates them once,
so a wrong type or value becomes `InvalidParams` naming the field, never an exception deeper in.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

import msgspec
from pygls.exceptions import JsonRpcInvalidParams

from kbls.limits import MAX_LIMIT, MAX_QUERY_CHARS, MAX_TAGS, MIN_LIMIT, RELATED_LIMIT, Mode, State

T = TypeVar("T")

Limit = Annotated[int, msgspec.Meta(ge=MIN_LIMIT, le=MAX_LIMIT)]
Query = Annotated[str, msgspec.Meta(max_length=MAX_QUERY_CHARS)]
Line = Annotated[int, msgspec.Meta(ge=0)]


class _Wire(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    """Base of every wire struct."""


# -- shared shapes ---------------------------------------------------------------------------
class Position(_Wire, frozen=True):
    """A place in a note: 0-based line and character, as in LSP."""

    line: Line
    character: Annotated[int, msgspec.Meta(ge=0)] = 0


class Range(_Wire, frozen=True):
    """The lines a hit covers: from `start` up to (not including) `end`."""

    start: Position
    end: Position


class Signals(_Wire, frozen=True):
    """A hit's 1-based rank in each ranking that found it; null where one did not."""

    semantic: int | None = None
    lexical: int | None = None


class Explain(_Wire, frozen=True):
    """Why a hit ranked there (`kb/search` with `explain`): each signal's evidence (0..1) and its
    weight for this query, the raw measures behind them, and what a note's other sections added."""

    semantic: float
    semantic_weight: float
    lexical: float
    lexical_weight: float
    cosine: float | None = None
    coverage: float | None = None
    bm25_share: float | None = None
    sections: float = 0.0


class _InRoot(_Wire, frozen=True):
    """A note of one of the client's folders: its file URI, root-relative path and root URI."""

    uri: str
    path: str
    root: str


class Section(_Wire, frozen=True):
    """Another matching section of a hit's note (`groupByFile`): enough to show and open it."""

    range: Range
    breadcrumb: str
    #: "" unless the request asked for `sectionSnippets`.
    snippet: str
    score: float


class Hit(_InRoot, frozen=True):
    """One answer of `kb/search` or `kb/related`: a chunk of a note, its score (0..1) and why."""

    range: Range
    title: str
    breadcrumb: str
    snippet: str
    score: float
    signals: Signals = Signals()
    reasons: list[str] = []
    #: `groupByFile`: how many other sections of the note matched.
    more: int = 0
    #: `groupByFile`: the best of them (at most 10), best first.
    sections: list[Section] = []
    #: with `explain` in the request: each signal's score and weight; null otherwise.
    explain: Explain | None = None


class _Health(_Wire, frozen=True):
    """Where the index stands, and why when that is `error`."""

    state: State
    #: why the state is `error`; null otherwise.
    error: str | None = None


class IndexInfo(_Health, frozen=True, kw_only=True):
    """The index's state as every answer carries it; `pending`: files queued for (re)indexing;
    `embedded`: the share of chunks with their vector (below 1 the answer is partial: every note
    is found by its words, only that share by meaning)."""

    pending: int = 0
    embedded: float = 1.0


# -- requests --------------------------------------------------------------------------------
class SearchFilters(_Wire, frozen=True):
    """Restrict an answer to notes matching any of `paths` (globs), carrying all `tags`, of any of `types`."""

    paths: list[str] = []
    tags: list[str] = []
    types: list[str] = []


class SearchParams(_Wire, frozen=True):
    """`kb/search` params: the query (with `tag:`, `path:`, `type:` terms), how many hits, which ranking."""

    query: Query
    limit: Limit | None = None
    mode: Mode | None = None
    filters: SearchFilters | None = None
    group_by_file: bool = False
    #: each hit carries `explain`: each signal's score and weight behind its score.
    explain: bool = False
    #: with `groupByFile`: the hits' `sections` carry their snippets (else ""); a picker asks
    #: when it expands a note.
    section_snippets: bool = False


class SearchResult(_Wire, frozen=True):
    """`kb/search` and `kb/related` result: hits best first, the server's time and the index's state."""

    hits: list[Hit]
    took_ms: float
    index: IndexInfo


class RelatedParams(_Wire, frozen=True):
    """`kb/related` params: notes related to a note (or, with `position`, to its section there)."""

    uri: str
    position: Position | None = None
    limit: Limit = RELATED_LIMIT


class ReindexParams(_Wire, frozen=True):
    """`kb/reindex` params: some files (`uris`) or every root; `force` re-reads unchanged files."""

    force: bool = False
    uris: list[str] | None = None


class ReindexResult(_Wire, frozen=True):
    """`kb/reindex` result: how many files were queued."""

    queued: int


class TagsParams(_Wire, frozen=True):
    """`kb/tags` params: the tags of the client's folders, optionally those starting with `prefix`."""

    #: only tags starting with it (case-insensitive, a leading `#` ignored); "" for every tag.
    prefix: Query = ""
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_TAGS)] = MAX_TAGS


class Tag(_Wire, frozen=True):
    """A tag and how many notes carry it."""

    name: str
    #: indexed notes carrying the tag.
    count: int


class _Page(_Wire, frozen=True):
    """A listing cut to its `limit`."""

    #: tags: those matching the prefix; notes: those the filters keep in all the roots (for
    #: paging with `offset`). More than the page holds when `limit` cut the list.
    total: int
    index: IndexInfo


class TagsResult(_Page, frozen=True):
    """`kb/tags` result: the tags, most used first."""

    tags: list[Tag]


class NotesParams(_Wire, frozen=True):
    """`kb/notes` params: a page (`offset`, `limit`) of the notes the filters keep, newest first."""

    limit: Limit | None = None
    offset: Annotated[int, msgspec.Meta(ge=0)] = 0
    filters: SearchFilters | None = None


class Note(_InRoot, frozen=True):
    """One note of a `kb/notes` page."""

    title: str
    tags: list[str]
    #: the file's modification time (as indexed), milliseconds since the Unix epoch.
    modified: int
    snippet: str


class NotesResult(_Page, frozen=True):
    """`kb/notes` result: one page of notes, most recently modified first."""

    notes: list[Note]


class SqliteInfo(_Wire, frozen=True):
    """Which SQLite a root's store runs on: the Python module, SQLite's version, sqlite-vec's."""

    module: str
    version: str
    vec: str


class FileProblem(_Wire, frozen=True):
    """A file of a root that could not be indexed, and why."""

    path: str
    reason: str


class RootStatus(_Wire, frozen=True):
    """One workspace folder's index: where its store is, its size and what it holds."""

    uri: str
    store: str
    store_bytes: int
    files: int
    chunks: int
    #: the root's embedding model and the dimension of its vectors.
    model: str
    dimension: int
    sqlite: SqliteInfo
    errors: list[FileProblem]
    #: why indexing this root fails (retried until it works); null when it does not.
    error: str | None = None


class StatusResult(_Health, frozen=True, kw_only=True):
    """`kb/status` result: the server, its model and queue, and each of the client's roots."""

    version: str
    #: the embedding model the daemon loads and the dimension of its vectors.
    model: str
    dimension: int
    queue: int
    embedded_since_start: int
    reused_since_start: int
    roots: list[RootStatus]
    #: the embedding pass, as in `IndexStatus`
    embedded: float = 1.0
    waiting: int = 0
    rate: float = 0.0
    eta_seconds: float | None = None


class IndexStatus(_Health, frozen=True, kw_only=True):
    """The `kb/indexStatus` notification."""

    pending: int
    files: int
    chunks: int
    message: str = ""
    #: the share of `chunks` with their vector
    embedded: float = 1.0
    #: chunks still waiting for their vector
    waiting: int = 0
    #: chunks embedded per second lately, and the seconds until none waits at that rate (null: unknown)
    rate: float = 0.0
    eta_seconds: float | None = None


class BacklinksParams(_Wire, frozen=True):
    """`kb/backlinks` params: the note whose backlinks are listed."""

    uri: str


class Backlink(_InRoot, frozen=True):
    """One link to the note from another: where it is (LSP range, client units), the linking
    note's title, the section it is in and the words of its paragraph."""

    range: Range
    title: str
    breadcrumb: str
    context: str


class BacklinksResult(_Wire, frozen=True):
    """`kb/backlinks` result: the links from other notes, by linking note then position."""

    backlinks: list[Backlink]
    #: how many notes link here.
    notes: int


# -- conversion ------------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """pygls's namedtuples (and lists of them) back into dicts and lists."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def parse(params: Any, kind: type[T]) -> T:
    """Validate request params into `kind`; raise `JsonRpcInvalidParams` naming the field."""
    raw = _plain(params)
    if raw is None:
        raw = {}
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as exc:
        message = str(exc).replace("`$.", "`").replace("`$`", "params")
        raise JsonRpcInvalidParams(f"invalid params: {message}") from None


def to_wire(value: msgspec.Struct) -> Any:
    return msgspec.to_builtins(value)
