"""References and backlinks: `textDocument/references` (on a note, its title, a heading, a
link or a `#tag`) and `kb/backlinks` (the links from other notes, with their section and
paragraph, for pickers and the related view).

Thin handlers over `Engine.graph` (`kbls.retrieval.backlinks`), reached through
`Daemon.in_root`; the answer's spans come from the index in the client's position units. A
document the client has not opened, or one outside every root, gets no references (None).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from kbls.engine import Engine
from kbls.errors import OutsideRootError
from kbls.lsp import opennotes
from kbls.protocol import wire
from kbls.retrieval.backlinks import Backlink, Reference

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

BACKLINKS = "kb/backlinks"


def register(server: KblsServer) -> None:
    server.feature(types.TEXT_DOCUMENT_REFERENCES)(references)
    server.feature(BACKLINKS)(backlinks)


async def references(ls: KblsServer, params: types.ReferenceParams) -> list[types.Location] | None:
    at = opennotes.cursor(ls, params.text_document.uri, params.position, "references")
    if at is None:
        return None
    path, view, line, character = at
    documents = opennotes.texts(ls)

    def ask(engine: Engine, rel: str) -> list[Reference]:
        target = engine.graph.target_at(rel, view, line, character)
        return engine.graph.references(target, engine.open_notes(documents)) if target is not None else []

    try:
        found = await ls.call(ls.query_pool, ls.daemon.in_root, path, ask)
    except (JsonRpcInvalidParams, OutsideRootError):
        return None
    units = opennotes.encoding(ls)
    return [
        types.Location(uri=opennotes.note_uri(found.folder, ref.path), range=opennotes.span_range(ref.span, units))
        for ref in found.answer
    ]


async def backlinks(ls: KblsServer, params: Any) -> Any:
    request = wire.parse(params, wire.BacklinksParams)
    path = opennotes.file_path(request.uri)
    if path is None:
        raise JsonRpcInvalidParams(f"uri must be a file:// URI, not {request.uri!r}")
    documents = opennotes.texts(ls)

    def ask(engine: Engine, rel: str) -> list[Backlink]:
        return engine.graph.backlinks(rel, engine.open_notes(documents))

    found = await ls.call(ls.query_pool, ls.daemon.in_root, path, ask)
    return wire.to_wire(backlinks_result(found.root_uri, found.folder, found.answer, opennotes.encoding(ls)))


def backlinks_result(root: str, folder: Path, found: list[Backlink], units: str) -> wire.BacklinksResult:
    items = []
    for backlink in found:
        ref = backlink.reference
        start, end = ref.span.columns(units)
        items.append(wire.Backlink(
            uri=opennotes.note_uri(folder, ref.path), path=ref.path, root=root,
            range=wire.Range(
                start=wire.Position(line=ref.span.line, character=start),
                end=wire.Position(line=ref.span.line, character=end),
            ),
            title=ref.title, breadcrumb=backlink.breadcrumb, context=backlink.context,
        ))
    return wire.BacklinksResult(backlinks=items, notes=len({b.path for b in items}))
