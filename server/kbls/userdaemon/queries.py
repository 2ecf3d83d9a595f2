"""Calls on the per-user daemon for one root: `kbls search`, `related`, `status`, and `kbls mcp`'s search.

They run the very engine calls the CLI makes, on the daemon's warm engine, so the answer (and
the CLI's JSON) is the same as without a daemon. The daemon answers only for a root it has open
with the store the CLI would use (same root, same `--store` or config `store`); otherwise the
answer is `None` and the CLI opens the store itself, as it always did. A daemon is never started
for the CLI. Errors travel as `Failure` (the error's class name and message), raised again on the
CLI side, so messages and exit codes stay those of the CLI.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from kbls.config import load_config, resolve_store_dir
from kbls.errors import BeingReopenedError, ConfigError, KblsError, ModelMismatchError, OutsideRootError, QueryError
from kbls.limits import RELATED_LIMIT
from kbls.query.filters import Filters
from kbls.results import Hit, RootStatus

if TYPE_CHECKING:  # the CLI imports this module: no engine (numpy, the model runtime) on its path
    from kbls.daemon.roots import Root
    from kbls.daemon.service import Daemon
    from kbls.engine import Engine

SEARCH = "kbls/cliSearch"
RELATED = "kbls/cliRelated"
STATUS = "kbls/cliStatus"


class RootQuery(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    #: the root as the CLI was given it (`--root`), absolute
    root: str
    #: `--store`, absolute; None: the root's config decides, as in the CLI
    store: str | None = None


class SearchQuery(RootQuery, frozen=True):
    query: str
    limit: int | None = None
    mode: str | None = None
    group_by_file: bool = False
    #: each hit carries each signal's score and weight (`kbls search --explain`)
    explain: bool = False
    #: filters besides those written in the query (`kbls mcp`'s tool arguments)
    paths: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    types: tuple[str, ...] = ()


class RelatedQuery(RootQuery, frozen=True):
    #: absolute path of the note
    path: str
    #: 0-based line, None: the whole note
    line: int | None = None
    limit: int = RELATED_LIMIT


class Failure(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    kind: str
    message: str


class SearchReply(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    hits: list[Hit]
    #: the store has no file at all (the CLI says "run `kbls index` first")
    empty_store: bool
    #: the mode searched (lexical when the model is not loaded)
    mode: str = ""


class RelatedReply(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    hits: list[Hit]


class StatusReply(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    status: RootStatus


Reply = SearchReply | RelatedReply | StatusReply | Failure | None

#: errors raised again by class on the CLI side (any other `KblsError` comes back as `KblsError`)
ERRORS: dict[str, type[KblsError]] = {
    cls.__name__: cls
    for cls in (QueryError, OutsideRootError, ConfigError, ModelMismatchError, BeingReopenedError, KblsError)
}


def open_root(roots: list[Root], query: RootQuery) -> Root | None:
    """The daemon's root of `query.root` if it is open with the store the CLI would use."""
    given = Path(os.path.abspath(os.path.expanduser(query.root)))  # as `daemon.roots.folder_path`
    resolved = given.resolve()
    root = next((r for r in roots if r.folder == given or r.real == resolved), None)
    if root is None:
        return None
    try:
        config = load_config(resolved, store_given=bool(query.store))[0]
        expected = resolve_store_dir(resolved, config, Path(query.store) if query.store else None)
    except KblsError:
        return None  # the CLI reports the broken config itself
    return root if root.store_dir.resolve() == expected else None


def search_reply(daemon: Daemon, query: SearchQuery) -> Reply:
    """`kbls search` on the daemon's engine; None when the root is not open here."""

    def search(engine: Engine) -> SearchReply:
        filters = Filters(query.paths, query.tags, query.types)
        result = engine.search(
            query.query, limit=query.limit, mode=query.mode, group_by_file=query.group_by_file,
            filters=None if filters.empty else filters, explain=query.explain,
        )
        empty = not result.hits and engine.store.counts().files == 0
        return SearchReply(hits=result.hits, empty_store=empty, mode=result.mode.value)

    return _on_engine(daemon, query, search)


def related_reply(daemon: Daemon, query: RelatedQuery) -> Reply:
    """`kbls related` on the daemon's engine; None when the root is not open here."""
    path = Path(query.path)
    return _on_engine(daemon, query, lambda engine: RelatedReply(hits=engine.related(path, query.line, limit=query.limit)))


def status_reply(daemon: Daemon, query: RootQuery) -> Reply:
    """`kbls status` on the daemon's engine; None when the root is not open here."""
    return _on_engine(daemon, query, lambda engine: StatusReply(status=engine.status()))


def _on_engine(daemon: Daemon, query: RootQuery, call: Callable[[Engine], Reply]) -> Reply:
    """`call` on the engine of the query's root, read as the editor's requests are
    (`Daemon.read`: on a lease, so a reopen meanwhile waits for it; a store replaced under it is
    "being rebuilt", a root retired meanwhile "being reopened").

    None when that root is not open here; a `Failure` when the engine raises a `KblsError`.
    """
    root = open_root(daemon.roots(), query)
    if root is None:
        return None
    try:
        return daemon.read(root, call)
    except KblsError as exc:
        return failure(exc)


def failure(exc: KblsError) -> Failure:
    """The error as its nearest class the CLI raises again (a store being rebuilt: being reopened)."""
    kind = next(cls.__name__ for cls in type(exc).__mro__ if cls.__name__ in ERRORS)
    return Failure(kind=kind, message=str(exc))


def raise_failure(failure: Failure) -> None:
    raise ERRORS.get(failure.kind, KblsError)(failure.message)
