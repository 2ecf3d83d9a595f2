"""One text of a note, read once: its lines and, computed on first use and kept, its links, the
lines inside code fences, its headings, and the index's reading of its links and tags
(`parse_note`).

Every notes feature (diagnostics, document links, code actions, references, rename, code lens)
reads an open note through the `NoteView` of its current version (`kbls.lsp.views` keeps one
per open document and version), and a closed note's text read from the disk through the one of
its content hash (`NoteViews`), so a request, or the next request on an unchanged text, never
reads the same text twice. A view is immutable in what it says; its readings are computed under
a lock, once, by whichever thread asks first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from kbls.indexing.parse import parse_note
from kbls.links.headings import headings
from kbls.links.syntax import LinkRef, fenced_lines, line_links, links_in
from kbls.storage.records import NoteSpans, TagSpan

T = TypeVar("T")

#: closed notes' views kept per root (by content hash), the most recently used.
KEPT_CLOSED_VIEWS = 256


class NoteView:
    """The text of one version of a note (lines without their ends) and what is read from it."""

    def __init__(self, lines: Sequence[str], previous: NoteView | None = None) -> None:
        self.lines: list[str] = [line.rstrip("\r\n") for line in lines]
        #: the view of the text before the last change: its lines' links are not read again.
        self._previous = previous if previous is not None and previous._links is not None else None
        self._lock = threading.RLock()  # a reading may ask for another (links read the fences)
        self._links: list[LinkRef] | None = None
        self._fenced: frozenset[int] | None = None
        self._headings: list[tuple[int, str]] | None = None
        self._spans: dict[str, NoteSpans] = {}

    def _once(self, attribute: str, make: Callable[[], T]) -> T:
        with self._lock:
            found: T | None = getattr(self, attribute)
            if found is None:
                found = make()
                setattr(self, attribute, found)
            return found

    @property
    def links(self) -> list[LinkRef]:
        """Every wiki and relative markdown link, in order (none in code: `links_in`)."""
        return self._once("_links", self._read_links)

    def _read_links(self) -> list[LinkRef]:
        previous, self._previous = self._previous, None
        if previous is None or previous._links is None:
            return links_in(self.lines, self.fenced)
        by_line: dict[int, list[LinkRef]] = {}
        for ref in previous._links:
            by_line.setdefault(ref.line, []).append(ref)
        known: dict[str, list[LinkRef]] = {}
        for number, refs in by_line.items():
            known.setdefault(previous.lines[number], refs)  # a line written twice: its first
        fenced = self.fenced
        out: list[LinkRef] = []
        for number, line in enumerate(self.lines):
            if number in fenced:
                continue
            same = known.get(line)
            if same is None:
                # a line the last text had no links on, or did not have: read it
                if "[" in line:
                    out.extend(line_links(number, line))
            elif same[0].line == number:
                out.extend(same)
            else:
                out.extend(replace(ref, line=number) for ref in same)
        return out

    @property
    def fenced(self) -> frozenset[int]:
        """The lines of fenced code blocks (fence lines included)."""
        return self._once("_fenced", lambda: frozenset(fenced_lines(self.lines)))

    @property
    def headings(self) -> list[tuple[int, str]]:
        """Each heading's line and text (`kbls.links.names.headings`)."""
        return self._once("_headings", lambda: list(headings(self.lines)))

    def spans(self, path: str) -> NoteSpans:
        """The links and tags as the indexer reads them for a note at root-relative `path` (a
        markdown link's key depends on the folder it is written in)."""
        with self._lock:
            found = self._spans.get(path)
            if found is None:
                found = self._spans[path] = parse_note(path, "\n".join(self.lines)).spans
            return found

    def link_at(self, line: int, character: int) -> LinkRef | None:
        """The link whose text holds the position, if any."""
        if not 0 <= line < len(self.lines) or line in self.fenced:
            return None
        return next((ref for ref in line_links(line, self.lines[line]) if ref.start <= character <= ref.end), None)

    def tag_at(self, path: str, line: int, character: int) -> TagSpan | None:
        """The tag use (inline or in the front matter) whose text holds the position, if any."""
        return next(
            (t for t in self.spans(path).tags if t.span.line == line and t.span.start <= character <= t.span.end), None
        )

    def is_heading(self, line: int) -> bool:
        """The line is a heading's (ATX, or setext text over its underline)."""
        return any(number == line for number, _ in self.headings)


class NoteViews:
    """The views of closed notes of one root by content hash, the most recently used kept."""

    def __init__(self, kept: int = KEPT_CLOSED_VIEWS) -> None:
        self._kept = kept
        self._lock = threading.Lock()
        self._views: OrderedDict[str, NoteView] = OrderedDict()

    def of(self, content_hash: str, lines: Sequence[str]) -> NoteView:
        """The view of the text whose hash is `content_hash` (made from `lines` the first time)."""
        with self._lock:
            found = self._views.get(content_hash)
            if found is not None:
                self._views.move_to_end(content_hash)
                return found
            made = self._views[content_hash] = NoteView(lines)
            while len(self._views) > self._kept:
                self._views.popitem(last=False)
            return made
