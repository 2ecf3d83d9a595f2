"""`DaemonBackend`: the MCP tools served by the per-user daemon where it has the root open.

A root an editor has open in the daemon is searched there: the model is warm, the vectors are
in memory, the index is kept current by the daemon, and nothing is loaded into this process.
Any other root, and every call when no daemon runs, is served by `LocalBackend` (read-only,
in-process) exactly as before. `read_note` and `status` are always local (they read a file or
the store's counts: nothing to gain from the daemon). The daemon is never started for MCP: a
daemon opening a root indexes and watches it, and `kbls mcp` leaves indexing to the user.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kbls.errors import OutsideRootError
from kbls.limits import Mode
from kbls.mcp.backend import NotesBackend, NoteText, NotIndexedError, RootState
from kbls.mcp.local import LocalBackend
from kbls.mcp.notes import locate
from kbls.query.filters import Filters
from kbls.results import Hit
from kbls.userdaemon import queries
from kbls.userdaemon.client import DaemonLink


class DaemonBackend(NotesBackend):
    """Daemon first, then in-process, root by root (see the module docstring)."""

    def __init__(self, local: LocalBackend, link: DaemonLink | None = None) -> None:
        self.local = local
        self.link = link or DaemonLink()

    def _store(self, root: Path) -> str | None:
        store = self.local.store_dirs.get(root.resolve())
        return str(store) if store is not None else None

    def search(
        self, roots: Sequence[Path], query: str, *, limit: int, mode: Mode, filters: Filters
    ) -> tuple[list[Hit], list[str]]:
        hits: list[Hit] = []
        notes: list[str] = []
        local_roots: list[Path] = []
        for root in roots:
            ask = queries.SearchQuery(
                root=str(root.absolute()), store=self._store(root), query=query, limit=limit, mode=mode.value,
                paths=filters.paths, tags=filters.tags, types=filters.types,
            )
            reply = self.link.ask(queries.SEARCH, ask, queries.SearchReply)
            if reply is None:
                local_roots.append(root)
                continue
            if reply.mode and reply.mode != mode.value:
                notes.append(f"{root}: searched {reply.mode} (the model is not loaded)")
            hits.extend(reply.hits)
        if local_roots:
            try:
                local_hits, local_notes = self.local.search(local_roots, query, limit=limit, mode=mode, filters=filters)
            except NotIndexedError as exc:
                if not hits and len(local_roots) == len(roots):
                    raise
                local_hits, local_notes = [], [str(exc)]
            hits.extend(local_hits)
            notes.extend(local_notes)
        hits.sort(key=lambda hit: -hit.score)  # stable: each root's own order is kept on ties
        return hits[:limit], notes

    def related(self, roots: Sequence[Path], path: str, *, line: int | None, limit: int) -> list[Hit]:
        try:
            root, rel = locate(roots, path)
        except OutsideRootError:
            return self.local.related(roots, path, line=line, limit=limit)  # says why, as before
        ask = queries.RelatedQuery(
            root=str(root.absolute()), store=self._store(root), path=str(root / rel), line=line, limit=limit
        )
        reply = self.link.ask(queries.RELATED, ask, queries.RelatedReply)
        if reply is None:
            return self.local.related(roots, path, line=line, limit=limit)
        return reply.hits

    def read_note(
        self, roots: Sequence[Path], path: str, *, start_line: int | None, end_line: int | None
    ) -> NoteText:
        return self.local.read_note(roots, path, start_line=start_line, end_line=end_line)

    def status(self, roots: Sequence[Path]) -> list[RootState]:
        return self.local.status(roots)

    def close(self) -> None:
        self.link.close()
        self.local.close()
