"""The text of a note as it is now, with its links and tags where they are now.

An edit must apply to the text the editor holds: a note open in the editor is taken from there
(its unsaved changes included, through the `NoteView` of its version), any other from the disk,
inside the root only. Its links and tags are the index's when the file is the one indexed (same
content hash), else found again in the text by the indexer's own reader (`NoteView.spans`, kept
per content hash), so a note saved a moment ago is never edited at stale positions.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kbls.hashing import content_hash
from kbls.indexing.text import decode_text, read_regular
from kbls.links.names import Catalogue
from kbls.links.resolve import HeadingLines, LinkResolver, LinkTarget
from kbls.links.syntax import LinkRef
from kbls.links.view import NoteView, NoteViews
from kbls.storage.records import LinkSpan, SourcedLink, SourcedTag, TagSpan
from kbls.storage.roles import Backend

#: root-relative path -> the view of a note open in the editor.
OpenNotes = Mapping[str, NoteView]


@dataclass(frozen=True, slots=True)
class CurrentNote:
    """A note's text now, and where its links and tags are in it."""

    path: str
    lines: list[str]
    links: tuple[LinkSpan, ...]
    tags: tuple[TagSpan, ...]
    #: taken from the editor (not the disk).
    open: bool


class RequestResolver(LinkResolver):
    """The root's resolver for one request: each path's check that it is a file inside the root
    (`inside`: realpath and stat) made once, not once per link naming it (200 links to one
    note cost 60 ms of checks), and each link resolved once per folder it is written in (where
    a link leads depends on its text and its note's folder only)."""

    def __init__(self, resolver: LinkResolver) -> None:
        super().__init__(resolver.root, resolver._real_root)
        self._root_text = str(resolver.root)
        self._real_text = str(self._real_root)
        self._checked: dict[str, Path | None] = {}
        self._resolved: dict[tuple[str, str, str | None, str], list[LinkTarget]] = {}

    def resolve(
        self, catalogue: Catalogue, source: str, ref: LinkRef, source_lines: list[str], seen: HeadingLines | None = None
    ) -> list[LinkTarget]:
        if not ref.target:  # into the note itself: its own text decides
            return super().resolve(catalogue, source, ref, source_lines, seen)
        key = (ref.kind.value, ref.target, ref.heading, posixpath.dirname(source))
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = super().resolve(catalogue, source, ref, source_lines, seen)
        return found

    def inside(self, rel: str) -> Path | None:
        if rel not in self._checked:
            self._checked[rel] = self._check(rel)
        return self._checked[rel]

    def _check(self, rel: str) -> Path | None:
        try:
            real = os.path.realpath(os.path.join(self._root_text, rel))
            if real.startswith(self._real_text.rstrip(os.sep) + os.sep) and os.path.isfile(real):
                return Path(real)
        except (OSError, ValueError):  # a NUL byte, a name too long for the system
            pass
        return None


class NoteTexts:
    """Reads the notes of one root as they are now (`open` first, then the disk), each once:
    made for one request."""

    def __init__(
        self, store: Backend, resolver: LinkResolver, open_notes: OpenNotes, views: NoteViews, max_bytes: int
    ) -> None:
        self.store = store
        #: a note larger than this is not read to be edited (the root's `max_file_bytes`: it is not indexed either).
        self.max_bytes = max_bytes
        self.resolver = RequestResolver(resolver)
        self.open_notes = open_notes
        self.views = views
        self._read: dict[str, CurrentNote | None] = {}

    def lines(self, path: str) -> list[str]:
        """The lines of the note at `path` ([] when it cannot be read)."""
        if path in self.open_notes:
            return list(self.open_notes[path].lines)
        note = self._read.get(path)
        if note is not None:
            return note.lines
        return self.resolver.read_lines(path, self.max_bytes) or []

    def current(
        self, path: str, indexed_links: Iterable[LinkSpan] = (), indexed_tags: Iterable[TagSpan] = (),
        indexed_hash: str | None = None,
    ) -> CurrentNote | None:
        """The note at `path` now; the `indexed_*` spans are taken as they are when its text is the
        one indexed (`indexed_hash`). None when it is neither open nor a readable file of the root."""
        if path in self._read:
            return self._read[path]
        made: CurrentNote | None
        if path in self.open_notes:
            view = self.open_notes[path]
            spans = view.spans(path)
            made = CurrentNote(path, list(view.lines), spans.links, spans.tags, True)
        else:
            made = self._from_disk(path, tuple(indexed_links), tuple(indexed_tags), indexed_hash)
        self._read[path] = made
        return made

    def _from_disk(
        self, path: str, links: tuple[LinkSpan, ...], tags: tuple[TagSpan, ...], indexed_hash: str | None
    ) -> CurrentNote | None:
        found = self.resolver.inside(path)
        if found is None:
            return None
        try:
            data = read_regular(found, self.max_bytes + 1)  # a FIFO swapped in must not block
        except OSError:
            return None
        if data is not None and len(data) > self.max_bytes:
            return None  # not cut short and edited: the indexer skips such a note too
        decoded = decode_text(data) if data is not None else None
        if data is None or decoded is None:
            return None
        lines = decoded.text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        found_hash = content_hash(data)
        if indexed_hash is None or found_hash != indexed_hash:
            spans = self.views.of(found_hash, lines).spans(path)
            links, tags = spans.links, spans.tags
        return CurrentNote(path, lines, links, tags, False)

    def of_links(self, found: Sequence[SourcedLink]) -> list[CurrentNote]:
        """The notes now of the sources of `found` (stored links), with those links where
        they are now; the open notes of the root come too (their links may be unsaved)."""
        return self._gather({s.path for s in found} | set(self.open_notes), found, [])

    def of_tags(self, found: Sequence[SourcedTag]) -> list[CurrentNote]:
        """As `of_links`, for stored tag uses."""
        return self._gather({s.path for s in found} | set(self.open_notes), [], found)

    def _gather(
        self, paths: set[str], links: Sequence[SourcedLink], tags: Sequence[SourcedTag]
    ) -> list[CurrentNote]:
        hashes = {path: row.hash for path, row in self.store.files(paths).items()}
        by_path_links: dict[str, list[LinkSpan]] = {}
        by_path_tags: dict[str, list[TagSpan]] = {}
        for link in links:
            by_path_links.setdefault(link.path, []).append(link.link)
        for tag in tags:
            by_path_tags.setdefault(tag.path, []).append(tag.tag)
        out = []
        for path in sorted(paths):
            note = self.current(path, by_path_links.get(path, ()), by_path_tags.get(path, ()), hashes.get(path))
            if note is not None:
                out.append(note)
        return out
