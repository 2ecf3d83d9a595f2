"""`kb/tags` and `kb/notes` over several roots: each root's listing (`kbls.retrieval.listing`)
merged into one answer. A note of a nested root is listed once, by the innermost root (as in
search): each root leaves out the folders of the roots nested inside it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from functools import partial
from typing import Protocol, TypeVar

from kbls.daemon.answers import IndexState, NotesAnswer, NotesRequest, RootNote, TagsAnswer
from kbls.daemon.roots import Root
from kbls.engine import Engine
from kbls.query.filters import Filters
from kbls.results import NoteSummary, TagCount
from kbls.storage.records import ListedFile

T = TypeVar("T")


class Guard(Protocol):
    """Runs a read of a root on a lease of its engine (`Daemon.read`: a store that vanished
    becomes a clear error)."""

    def __call__(self, root: Root, query: Callable[[Engine], T]) -> T: ...


def nested_folders(root: Root, every: Sequence[Root]) -> list[str]:
    """The folders of the other roots inside `root`, root-relative, each ending in `/`."""
    return [
        other.folder.relative_to(root.folder).as_posix() + "/"
        for other in every
        if other is not root and other.folder != root.folder and other.folder.is_relative_to(root.folder)
    ]


def tags(roots: Sequence[Root], every: Sequence[Root], prefix: str, limit: int, guard: Guard, index: IndexState) -> TagsAnswer:
    """The tags of `roots` (`every`: all open roots, to leave nested ones out) counted together."""
    per_root = [guard(root, partial(_tags, prefix, nested_folders(root, every))) for root in roots]
    return merge_tags(per_root, limit, index)


def merge_tags(per_root: Sequence[list[TagCount]], limit: int, index: IndexState) -> TagsAnswer:
    """Counts of the same tag in several roots added up; most used first, then by name."""
    totals: dict[str, int] = {}
    for counted in per_root:
        for tag in counted:
            totals[tag.name] = totals.get(tag.name, 0) + tag.count
    ordered = sorted(totals.items(), key=lambda pair: (-pair[1], pair[0]))
    return TagsAnswer(tags=[TagCount(name, count) for name, count in ordered[:limit]], total=len(ordered), index=index)


def notes(
    roots: Sequence[Root], every: Sequence[Root], request: NotesRequest, limit: int, guard: Guard, index: IndexState
) -> NotesAnswer:
    """The page `request.offset`..+`limit` of the notes of `roots`, most recently modified first
    (then by root and path). Each root reads its first `offset + limit` notes; tags and snippets
    are read for the page shown only.

    :raises QueryError: for an invalid path glob.
    """
    filters = request.filters or Filters()
    wanted = request.offset + limit
    pages: list[tuple[list[ListedFile], int]] = [
        guard(root, partial(_recent, filters, wanted, nested_folders(root, every)))
        for root in roots
    ]
    keyed = ([(-f.mtime_ns, order, f.path, f) for f in files] for order, (files, _) in enumerate(pages))
    page = list(heapq.merge(*keyed, key=lambda row: row[:3]))[request.offset : request.offset + limit]
    shown: dict[int, list[ListedFile]] = {}
    for _, order, _, listed in page:
        shown.setdefault(order, []).append(listed)
    described: dict[tuple[int, str], RootNote] = {}
    for order, files in shown.items():
        root = roots[order]
        for summary in guard(root, partial(_summaries, files)):
            described[(order, summary.path)] = RootNote(root.uri, root.folder, summary)
    found = [described[(order, f.path)] for _, order, _, f in page if (order, f.path) in described]
    return NotesAnswer(notes=found, total=sum(total for _, total in pages), index=index)


# -- the reads, each on a leased engine -----------------------------------------------------------
def _tags(prefix: str, nested: list[str], engine: Engine) -> list[TagCount]:
    return engine.listing.tags(prefix, nested)


def _recent(filters: Filters, wanted: int, nested: list[str], engine: Engine) -> tuple[list[ListedFile], int]:
    return engine.listing.recent(filters, wanted, nested)


def _summaries(files: list[ListedFile], engine: Engine) -> list[NoteSummary]:
    return engine.listing.summaries(files)
