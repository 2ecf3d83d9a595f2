"""Listings of one root that need no ranking: its tags by use, its notes by modification time.

`kb/tags` (a tag picker, like zk's `:ZkTags`) and `kb/notes` (what a picker shows before anything
is typed: the notes, most recently modified first) read them through `Engine.listing`. A listing
leaves out the notes under `skip`, the folders of roots nested inside this one: those roots
answer for them (as in search).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from kbls.query.filters import Filters
from kbls.query.globs import check_glob
from kbls.results import NoteSummary, TagCount
from kbls.retrieval.snippet import make_snippet
from kbls.storage.records import ListedFile
from kbls.storage.roles import Backend

#: the largest integer SQLite binds.
SQLITE_MAX_INT = 2**63 - 1


def tag_prefix(prefix: str) -> str:
    """A prefix as tags are stored: lowercase, without a leading `#`."""
    return prefix.strip().lstrip("#").lower()


class Listing:
    """Tags and recent notes of one root's store."""

    def __init__(self, store: Backend) -> None:
        self.store = store
        self._lock = threading.Lock()  # guards _counted (the query threads share it)
        #: every tag counted, in order, for the store generation and nested folders it was read at:
        #: `#` completion asks again at every keystroke, and the counts change only on indexing.
        self._counted: tuple[tuple[int, tuple[str, ...]], list[TagCount]] | None = None

    def tags(self, prefix: str = "", skip: Sequence[str] = ()) -> list[TagCount]:
        """Every tag starting with `prefix` with its notes counted, most used first, then by name."""
        wanted = tag_prefix(prefix)
        return [tag for tag in self._all_tags(tuple(skip)) if tag.name.startswith(wanted)]

    def _all_tags(self, skip: tuple[str, ...]) -> list[TagCount]:
        # the store's change counter, not a scan of the files table (`notes_version`) per keystroke
        generation = self.store.lexical_generation()
        key = (generation, skip) if generation is not None else None  # None: inside a write transaction
        with self._lock:
            if key is not None and self._counted is not None and self._counted[0] == key:
                return self._counted[1]
        counts = self.store.tag_counts("", skip)
        ordered = [TagCount(name, count) for name, count in sorted(counts, key=lambda pair: (-pair[1], pair[0]))]
        if key is not None:
            with self._lock:
                self._counted = (key, ordered)
        return ordered

    def recent(self, filters: Filters, limit: int, skip: Sequence[str] = ()) -> tuple[list[ListedFile], int]:
        """Up to `limit` notes the filters keep, most recently modified first, and their total.

        :raises QueryError: for an invalid path glob.
        """
        for pattern in filters.paths:
            check_glob(pattern)
        # a page far beyond the end (offset + limit past SQLite's integers) is simply empty
        return self.store.recent_files(filters, min(limit, SQLITE_MAX_INT), skip)

    def summaries(self, files: Sequence[ListedFile]) -> list[NoteSummary]:
        """`files` with their tags and a snippet (read for the page shown only, not the whole list)."""
        ids = [f.id for f in files]
        tags = self.store.tags_of_files(ids)
        bodies = self.store.first_chunk_bodies(ids)
        return [
            NoteSummary(f.path, f.title, f.mtime_ns, tags.get(f.id, []), make_snippet(bodies.get(f.id, ""), []))
            for f in files
        ]
