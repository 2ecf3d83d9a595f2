"""The `kb/*` requests (search, related, status, reindex, tags, notes) and `workspace/symbol`:
each validates its params, makes one call on the client's view and converts the answer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from kbls.daemon import answers
from kbls.limits import MAX_QUERY_CHARS
from kbls.lsp import convert
from kbls.lsp.uris import client_uri
from kbls.protocol import wire

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

SYMBOL_LIMIT = 50


def register(server: KblsServer) -> None:
    server.feature("kb/search")(kb_search)
    server.feature("kb/related")(kb_related)
    server.feature("kb/status")(kb_status)
    server.feature("kb/reindex")(kb_reindex)
    server.feature("kb/tags")(kb_tags)
    server.feature("kb/notes")(kb_notes)
    server.feature(types.WORKSPACE_SYMBOL)(workspace_symbol)


async def kb_search(ls: KblsServer, params: Any) -> Any:
    request = convert.search_request(wire.parse(params, wire.SearchParams))
    answer = await ls.call(ls.search_pool, ls.daemon.search, request)
    return wire.to_wire(convert.search_result(answer))


async def kb_related(ls: KblsServer, params: Any) -> Any:
    request = wire.parse(params, wire.RelatedParams)
    line = request.position.line if request.position else None
    answer = await ls.call(ls.query_pool, ls.daemon.related, _path(request.uri), line, request.limit)
    return wire.to_wire(convert.search_result(answer))


async def kb_status(ls: KblsServer, params: Any) -> Any:
    return wire.to_wire(convert.status_result(await ls.call(ls.query_pool, ls.daemon.status)))


async def kb_reindex(ls: KblsServer, params: Any) -> Any:
    request = wire.parse(params, wire.ReindexParams)
    paths = [_path(uri) for uri in request.uris] if request.uris is not None else None
    queued = await ls.call(ls.query_pool, ls.daemon.reindex, paths, request.force)
    return wire.to_wire(wire.ReindexResult(queued=queued))


async def kb_tags(ls: KblsServer, params: Any) -> Any:
    request = wire.parse(params, wire.TagsParams)
    answer = await ls.call(ls.query_pool, ls.daemon.tags, request.prefix, request.limit)
    return wire.to_wire(convert.tags_result(answer))


async def kb_notes(ls: KblsServer, params: Any) -> Any:
    request = convert.notes_request(wire.parse(params, wire.NotesParams))
    answer = await ls.call(ls.query_pool, ls.daemon.notes, request)
    return wire.to_wire(convert.notes_result(answer))


async def workspace_symbol(ls: KblsServer, params: types.WorkspaceSymbolParams) -> list[types.SymbolInformation]:
    if not params.query.strip():
        return []
    request = answers.SearchRequest(query=params.query[:MAX_QUERY_CHARS], limit=SYMBOL_LIMIT)
    return convert.symbols(await ls.call(ls.search_pool, ls.daemon.search, request))


def _path(uri: str) -> Path:
    """The file path of a `file://` URI; anything else is `InvalidParams`."""
    path = client_uri(uri).path if isinstance(uri, str) else None
    if path is None:
        raise JsonRpcInvalidParams(f"uri must be a file:// URI, not {uri!r}")
    return path
