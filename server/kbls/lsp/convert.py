"""Every conversion between the daemon's typed answers and the wire: `kb/*` structs and LSP types.

The daemon answers with `kbls.daemon.answers` (engine hits tagged with their root); this module
makes URIs, ranges and camelCase structs of them, and the hover and workspace-symbol shapes.
"""

from __future__ import annotations

from typing import Any

import msgspec
from lsprotocol import types

from kbls.daemon.answers import (
    DaemonStatus,
    IndexState,
    NotesAnswer,
    NotesRequest,
    RootHit,
    RootNote,
    RootReport,
    SearchAnswer,
    SearchRequest,
    TagsAnswer,
)
from kbls.daemon.watch import ChangeKind, FileChange
from kbls.lsp.uris import client_uri, file_uri
from kbls.protocol import wire
from kbls.query.filters import Filters
from kbls.results import Hit as EngineHit


# -- requests --------------------------------------------------------------------------------
def _filters(f: wire.SearchFilters | None) -> Filters | None:
    return Filters(tuple(f.paths), tuple(f.tags), tuple(f.types)) if f else None


def search_request(params: wire.SearchParams) -> SearchRequest:
    return SearchRequest(
        query=params.query, limit=params.limit, mode=params.mode, filters=_filters(params.filters),
        group_by_file=params.group_by_file, explain=params.explain, section_snippets=params.section_snippets,
    )


def notes_request(params: wire.NotesParams) -> NotesRequest:
    return NotesRequest(limit=params.limit, offset=params.offset, filters=_filters(params.filters))


_CHANGE_KINDS: dict[types.FileChangeType, ChangeKind] = {
    types.FileChangeType.Created: "created",
    types.FileChangeType.Changed: "changed",
    types.FileChangeType.Deleted: "deleted",
}


def file_changes(params: types.DidChangeWatchedFilesParams) -> list[FileChange]:
    """The editor's file events as the daemon's changes; a URI that is not a file's is left out."""
    changes = []
    for event in params.changes:
        path = client_uri(event.uri).path
        kind = _CHANGE_KINDS.get(event.type)
        if path is not None and kind is not None:
            changes.append(FileChange(path, kind))
    return changes


# -- answers ---------------------------------------------------------------------------------
def _lines(start_line: int, end_line: int) -> wire.Range:
    """A chunk's lines (inclusive) as a wire range: the end is exclusive."""
    return wire.Range(start=wire.Position(line=start_line), end=wire.Position(line=end_line + 1))


def hit_to_wire(hit: EngineHit, uri: str, root_uri: str) -> wire.Hit:
    """An engine hit as a wire hit: the range covers the whole chunk (end is exclusive)."""
    return wire.Hit(
        uri=uri, path=hit.path, root=root_uri, range=_lines(hit.start_line, hit.end_line),
        title=hit.title, breadcrumb=hit.breadcrumb, snippet=hit.snippet, score=hit.score,
        signals=wire.Signals(semantic=hit.signals.semantic, lexical=hit.signals.lexical),
        reasons=list(hit.reasons), more=hit.more,
        sections=[
            wire.Section(range=_lines(s.start_line, s.end_line), breadcrumb=s.breadcrumb, snippet=s.snippet, score=s.score)
            for s in hit.sections
        ],
        explain=None if hit.explain is None else wire.Explain(**msgspec.structs.asdict(hit.explain)),
    )


def hit(found: RootHit) -> wire.Hit:
    """A root's hit, its URI spelled with the root's folder as the client named it."""
    return hit_to_wire(found.hit, file_uri(found.folder / found.hit.path), found.root_uri)


def index_info(state: IndexState) -> wire.IndexInfo:
    return wire.IndexInfo(state=state.state, pending=state.pending, error=state.error, embedded=round(state.embedded, 4))


def index_status(state: IndexState) -> wire.IndexStatus:
    """The `kb/indexStatus` notification."""
    return wire.IndexStatus(
        state=state.state, pending=state.pending, files=state.files, chunks=state.chunks,
        message=state.message, error=state.error, **_embedding(state),
    )


def search_result(answer: SearchAnswer) -> wire.SearchResult:
    """A `kb/search` or `kb/related` answer."""
    return wire.SearchResult(hits=[hit(h) for h in answer.hits], took_ms=answer.took_ms, index=index_info(answer.index))


def tags_result(answer: TagsAnswer) -> wire.TagsResult:
    """The `kb/tags` answer."""
    tags = [wire.Tag(name=t.name, count=t.count) for t in answer.tags]
    return wire.TagsResult(tags=tags, total=answer.total, index=index_info(answer.index))


def note(listed: RootNote) -> wire.Note:
    """A listed note, its URI spelled with the root's folder as the client named it."""
    n = listed.note
    return wire.Note(
        uri=file_uri(listed.folder / n.path), path=n.path, root=listed.root_uri, title=n.title,
        tags=list(n.tags), modified=n.modified_ns // 1_000_000, snippet=n.snippet,
    )


def notes_result(answer: NotesAnswer) -> wire.NotesResult:
    """The `kb/notes` answer."""
    return wire.NotesResult(notes=[note(n) for n in answer.notes], total=answer.total, index=index_info(answer.index))


def _root_status(report: RootReport) -> wire.RootStatus:
    s = report.status
    return wire.RootStatus(
        uri=report.uri, store=s.store, store_bytes=s.store_bytes, files=s.files, chunks=s.chunks,
        model=s.model, dimension=s.dimension,
        sqlite=wire.SqliteInfo(module=s.sqlite.module, version=s.sqlite.version, vec=s.sqlite.vec),
        errors=[wire.FileProblem(path=e.path, reason=e.reason) for e in s.errors],
        error=report.error,
    )


def status_result(status: DaemonStatus) -> wire.StatusResult:
    """The `kb/status` answer."""
    return wire.StatusResult(
        version=status.version, state=status.index.state, queue=status.index.pending,
        model=status.model, dimension=status.dimension,
        embedded_since_start=status.embedded_since_start, reused_since_start=status.reused_since_start,
        roots=[_root_status(r) for r in status.roots], error=status.index.error,
        **_embedding(status.index),
    )


def _embedding(state: IndexState) -> dict[str, Any]:
    """The embedding pass's fields of `kb/indexStatus` and `kb/status`."""
    return {
        "embedded": round(state.embedded, 4), "waiting": state.waiting, "rate": round(state.rate, 1),
        "eta_seconds": None if state.eta_s is None else round(state.eta_s),
    }


# -- LSP shapes ------------------------------------------------------------------------------
def _label(hit: wire.Hit) -> str:
    """`Title › Section` (the breadcrumb already starts with the title when it has sections)."""
    crumbs = [c.strip() for c in hit.breadcrumb.split(">") if c.strip()] if hit.breadcrumb else []
    if not crumbs or crumbs[0] != hit.title:
        crumbs.insert(0, hit.title or hit.path)
    return " › ".join(crumbs)


def _escaped(text: str) -> str:
    return text.replace("[", "\\[").replace("]", "\\]")


def related_lines(hits: list[wire.Hit]) -> list[str]:
    """One markdown line per related note: its score, its title linked to the related section,
    and why (the reasons name the section, so the title is not repeated)."""
    lines = []
    for hit in hits:
        title = _escaped(hit.title or hit.path)
        why = "; ".join(hit.reasons)
        lines.append(f"- {hit.score:.2f} [{title}]({hit.uri}#L{hit.range.start.line + 1})" + (f" — {why}" if why else ""))
    return lines


def related_markdown(hits: list[wire.Hit]) -> str:
    """Hover text: the related notes, each a link to its section, with its score and why."""
    return "\n".join(["**Related notes**", "", *related_lines(hits)])


def hover(answer: SearchAnswer) -> types.Hover | None:
    """Related notes as hover markdown; None when nothing is related."""
    if not answer.hits:
        return None
    return _markdown(related_markdown([hit(h) for h in answer.hits]))


def link_hover(title: str, target_uri: str, answer: SearchAnswer) -> types.Hover:
    """The hover of a link: where it leads, and the notes related to that section."""
    lines = [f"**Links to** [{_escaped(title)}]({target_uri})"]
    if answer.hits:
        lines += ["", "**Related to it**", "", *related_lines([hit(h) for h in answer.hits])]
    return _markdown("\n".join(lines))


def _markdown(value: str) -> types.Hover:
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value))


def symbol_of(hit: wire.Hit) -> types.SymbolInformation:
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


def symbols(answer: SearchAnswer) -> list[types.SymbolInformation]:
    return [symbol_of(hit(h)) for h in answer.hits]
