"""State a feature module keeps per server (per client connection): pending diagnostics, parsed
outlines. Each module's state class is made on first use from the server it belongs to and lives
as long as that server (`KblsServer.feature_states`): the per-user daemon runs one server per
connection, and a module-level dict would mix their documents.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, cast

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

S = TypeVar("S")


def state_of(ls: KblsServer, make: Callable[[KblsServer], S]) -> S:
    """The state `make` (a class taking the server) built for `ls`, made on first use."""
    found = ls.feature_states.get(make)
    if found is None:
        found = ls.feature_states[make] = make(ls)
    return cast(S, found)
