"""The command line's and `kbls mcp`'s queries on the daemon (`kbls.userdaemon.queries`): the
engine calls the CLI would make itself, on the daemon's warm engine, answered as plain JSON
(null: the root is not open here, and the CLI serves itself)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from kbls.daemon.service import Daemon
from kbls.protocol import wire
from kbls.userdaemon import queries

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

Q = TypeVar("Q", bound=queries.RootQuery)


def register(server: KblsServer) -> None:
    for method, (query_type, reply) in METHODS.items():
        server.feature(method)(_handler(query_type, reply))


def _handler(query_type: type[Q], reply: Callable[[Daemon, Q], queries.Reply]) -> Callable[..., Any]:
    async def answer(ls: KblsServer, params: Any) -> Any:
        query = wire.parse(params, query_type)
        daemon = ls.daemon.host.daemon
        found = await asyncio.get_running_loop().run_in_executor(ls.query_pool, reply, daemon, query)
        return msgspec.to_builtins(found)

    return answer


METHODS: dict[str, tuple[type[Any], Callable[[Daemon, Any], queries.Reply]]] = {
    queries.SEARCH: (queries.SearchQuery, queries.search_reply),
    queries.RELATED: (queries.RelatedQuery, queries.related_reply),
    queries.STATUS: (queries.RootQuery, queries.status_reply),
}
