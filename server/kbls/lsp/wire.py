"""Wire types of the `kb/*` protocol (docs/protocol.md), shared by the daemon and the tests.

Every struct is camelCase on the wire. Params arrive from pygls as nested namedtuples (its
fallback for unknown methods); `parse` turns them back into plain data and validates them once,
so a wrong type or value becomes `InvalidParams` naming the field, never an exception deeper in.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

import msgspec
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from kbls.limits import MAX_LIMIT, MAX_QUERY_CHARS, MIN_LIMIT, Mode
from kbls.results import Hit as EngineHit

T = TypeVar("T")

State = Literal["loading", "indexing", "ready", "error"]
Limit = Annotated[int, msgspec.Meta(ge=MIN_LIMIT, le=MAX_LIMIT)]
Query = Annotated[str, msgspec.Meta(max_length=MAX_QUERY_CHARS)]
Line = Annotated[int, msgspec.Meta(ge=0)]


class _Wire(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    """Base of every wire struct."""


# -- shared shapes ---------------------------------------------------------------------------
class Position(_Wire, frozen=True):
    line: Line
    character: Annotated[int, msgspec.Meta(ge=0)] = 0


class Range(_Wire, frozen=True):
    start: Position
    end: Position


class Signals(_Wire, frozen=True):
    semantic: int | None = None
    lexical: int | None = None


class Hit(_Wire, frozen=True):
    uri: str
    path: str
    root: str
    range: Range
    title: str
    breadcrumb: str
    snippet: str
    score: float
    signals: Signals = Signals()
    reasons: list[str] = []
    more: int = 0


class IndexInfo(_Wire, frozen=True):
    state: State
    pending: int = 0


# -- requests --------------------------------------------------------------------------------
class SearchFilters(_Wire, frozen=True):
    paths: list[str] = []
    tags: list[str] = []
    types: list[str] = []


class SearchParams(_Wire, frozen=True):
    query: Query
    limit: Limit | None = None
    mode: Mode | None = None
    filters: SearchFilters | None = None
    group_by_file: bool = False


class SearchResult(_Wire, frozen=True):
    hits: list[Hit]
    took_ms: float
    index: IndexInfo


class RelatedParams(_Wire, frozen=True):
    uri: str
    position: Position | None = None
    limit: Limit = 10


class ReindexParams(_Wire, frozen=True):
    force: bool = False
    uris: list[str] | None = None


class ReindexResult(_Wire, frozen=True):
    queued: int


class SqliteInfo(_Wire, frozen=True):
    module: str
    version: str
    vec: str


class FileProblem(_Wire, frozen=True):
    path: str
    reason: str


class RootStatus(_Wire, frozen=True):
    uri: str
    store: str
    store_bytes: int
    files: int
    chunks: int
    model: str
    dimension: int
    sqlite: SqliteInfo
    errors: list[FileProblem]


class StatusResult(_Wire, frozen=True):
    version: str
    state: State
    queue: int
    model: str
    dimension: int
    embedded_since_start: int
    reused_since_start: int
    roots: list[RootStatus]


class IndexStatus(_Wire, frozen=True):
    """The `kb/indexStatus` notification."""

    state: State
    pending: int
    files: int
    chunks: int
    message: str = ""


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


def hit_to_wire(hit: EngineHit, uri: str, root_uri: str) -> Hit:
    """An engine hit as a wire hit: the range covers the whole chunk (end is exclusive)."""
    return Hit(
        uri=uri, path=hit.path, root=root_uri,
        range=Range(start=Position(line=hit.start_line), end=Position(line=hit.end_line + 1)),
        title=hit.title, breadcrumb=hit.breadcrumb, snippet=hit.snippet, score=hit.score,
        signals=Signals(semantic=hit.signals.semantic, lexical=hit.signals.lexical),
        reasons=list(hit.reasons), more=hit.more,
    )


def _label(hit: Hit) -> str:
    """`Title › Section` (the breadcrumb already starts with the title when it has sections)."""
    crumbs = [c.strip() for c in hit.breadcrumb.split(">") if c.strip()] if hit.breadcrumb else []
    if not crumbs or crumbs[0] != hit.title:
        crumbs.insert(0, hit.title or hit.path)
    return " › ".join(crumbs)


def related_markdown(hits: list[Hit]) -> str:
    """Hover text: one markdown link per related note (to its section), with one line of why."""
    lines = ["**Related notes**", ""]
    for hit in hits:
        label = _label(hit).replace("[", "\\[").replace("]", "\\]")
        why = "; ".join(hit.reasons) or hit.path
        lines.append(f"- [{label}]({hit.uri}#L{hit.range.start.line + 1}) — {why}")
    return "\n".join(lines)


def symbol_of(hit: Hit) -> types.SymbolInformation:
    """A search hit as a workspace symbol (Ctrl+T, `vim.lsp.buf.workspace_symbol()`)."""
    return types.SymbolInformation(
        name=_label(hit), kind=types.SymbolKind.String, container_name=hit.path,
        location=types.Location(
            uri=hit.uri,
            range=types.Range(
                start=types.Position(line=hit.range.start.line, character=0),
                end=types.Position(line=hit.range.end.line, character=0),
            ),
        ),
    )
