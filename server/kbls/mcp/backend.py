"""What the MCP tools need from an index, as one small interface, and the values it returns.

`NotesBackend` is the seam: `LocalBackend` opens each root's store in this process; a backend
that relays the same four calls to a per-user daemon over a socket can implement it unchanged.
Every method takes the roots of the calling client, so one backend may serve several clients.
Errors are `KblsError`s whose message is written for the model that reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import msgspec

from kbls.errors import KblsError
from kbls.limits import Mode
from kbls.query.filters import Filters
from kbls.results import Hit, RootStatus


class NotIndexedError(KblsError):
    """No root of the request has an index yet: the MCP server never indexes, the user does."""


class NoteText(msgspec.Struct, kw_only=True, frozen=True):
    """Lines of one note. Line numbers are 1-based and inclusive, as people and editors count."""

    root: str
    path: str  # posix, relative to the root
    start_line: int
    end_line: int
    total_lines: int
    text: str
    #: True when the range was cut at the line or character limit; read on from `end_line + 1`.
    truncated: bool


class RootState(msgspec.Struct, kw_only=True, frozen=True):
    """One root as the backend sees it: its index's status, or why there is none."""

    root: str
    indexed: bool
    status: RootStatus | None = None
    message: str | None = None


class NotesBackend(Protocol):
    """The four calls behind the MCP tools. Read-only: no backend call indexes or writes."""

    def search(
        self, roots: Sequence[Path], query: str, *, limit: int, mode: Mode, filters: Filters
    ) -> tuple[list[Hit], list[str]]:
        """The best `limit` hits over all indexed `roots`, and a note for each root skipped.

        :raises NotIndexedError: when no root has an index.
        """
        ...

    def related(self, roots: Sequence[Path], path: str, *, line: int | None, limit: int) -> list[Hit]:
        """Notes related to `path` (root-relative or absolute), or to its section at 0-based `line`."""
        ...

    def read_note(
        self, roots: Sequence[Path], path: str, *, start_line: int | None, end_line: int | None
    ) -> NoteText:
        """Lines of a note file inside an indexed root (1-based, inclusive range)."""
        ...

    def status(self, roots: Sequence[Path]) -> list[RootState]:
        """Each root's index: files, chunks, model, problems; or why it has none."""
        ...

    def close(self) -> None:
        """Release stores and models."""
        ...
