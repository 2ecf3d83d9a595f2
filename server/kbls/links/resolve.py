"""Where a link leads: a `LinkResolver` resolves the links of one root against its `Catalogue`
(`kbls.links.names`) and reads files only inside the root's real folder (see that module's
docstring for how a name and a path are read).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from kbls.indexing.formats.documents import document_kind
from kbls.indexing.text import decode_text, read_regular
from kbls.links.headings import heading_line, heading_line_in, headings
from kbls.links.names import Catalogue, Note
from kbls.links.syntax import LinkKind, LinkRef

#: a target note larger than this is not read to find a heading (the link opens at its top).
MAX_HEADING_READ_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class LinkTarget:
    """Where a link leads: a root-relative path and the 0-based line (its heading, or 0)."""

    path: str
    line: int
    title: str


def relative_target(source: str, target: str) -> str | None:
    """A markdown link's path as a root-relative path ("." for the root itself); None when it
    leaves the root."""
    base = "" if target.startswith("/") else posixpath.dirname(source)
    joined = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
    if joined == ".." or joined.startswith("../"):
        return None
    return joined  # "." is the root's own folder (`[root](./)`)


#: per note path: the lines of each heading looked up so far, and the note's lines.
HeadingLines = dict[str, tuple[dict[str, int], list[str]]]


class LinkResolver:
    """Resolves links of one root against a `Catalogue`; reads files only inside the root."""

    def __init__(self, root: Path, real_root: Path | None = None) -> None:
        self.root = root
        #: `real_root`: the root's real path found already (a resolver made for one request from
        #: the engine's: a workspace pull makes one per note, and each realpath stats every folder).
        self._real_root = Path(os.path.realpath(root)) if real_root is None else real_root

    def inside(self, rel: str) -> Path | None:
        """The file at `rel` when it exists inside the root's real folder (symlinks followed)."""
        try:
            real = Path(os.path.realpath(self.root / rel))
            if real != self._real_root and real.is_relative_to(self._real_root) and real.is_file():
                return real
        except (OSError, ValueError):  # a NUL byte (`%00` in a link), a name too long for the system
            pass
        return None

    def read_lines(self, rel: str, limit: int) -> list[str] | None:
        found = self.inside(rel)
        if found is None or document_kind(rel) is not None:
            return None  # a PDF's or web page's bytes hold no headings a link's `#page=2` names
        try:
            data = read_regular(found, limit)  # a FIFO swapped in after `inside` must not block
        except OSError:
            return None
        if data is None:
            return None
        decoded = decode_text(data)
        return decoded.text.split("\n") if decoded is not None else None

    def resolve(
        self, catalogue: Catalogue, source: str, ref: LinkRef, source_lines: list[str], seen: HeadingLines | None = None
    ) -> list[LinkTarget]:
        """Where `ref` (a link in the note at `source`) leads, best first; [] if nowhere. `seen`
        keeps the headings found across the links of one request (each note is read once)."""
        seen = {} if seen is None else seen
        if not ref.target:  # [[#heading]], [x](#heading): this note, read from its text (maybe not saved yet)
            own = catalogue.by_path.get(source) or Note(0, source, "", (), "")
            return [self._at_heading(catalogue, own, ref.heading, source, source_lines, seen)]
        notes = self._named_notes(catalogue, source, ref)
        if notes is None:  # a path to no note
            rel = relative_target(source, ref.target) or ""
            if ref.heading or self.inside(rel) is None:
                return []
            return [LinkTarget(rel, 0, "")]  # a file of the root that is not a note (an image)
        return [self._at_heading(catalogue, note, ref.heading, source, source_lines, seen) for note in notes]

    def _named_notes(self, catalogue: Catalogue, source: str, ref: LinkRef) -> list[Note] | None:
        """The notes of the root a link's text names from the folder of `source`, best first (a
        file of each checked), kept in the catalogue; None for a path inside the root to no note."""
        key = (ref.kind.value, ref.target, posixpath.dirname(source))
        if key in catalogue.link_notes:
            return catalogue.link_notes[key]
        found: list[Note] | None
        if ref.kind == LinkKind.WIKI:
            found = [note for note in catalogue.named(ref.target, source) if self.exists(note.path)]
        else:
            rel = relative_target(source, ref.target)
            note = None if rel is None else catalogue.by_path.get(rel) or catalogue.by_path.get(rel + ".md")
            if rel is not None and note is None:
                return None  # not kept: whether it is a file of the root is asked each time
            found = [note] if note is not None and self.exists(note.path) else []
        catalogue.link_notes[key] = found
        return found

    def exists(self, rel: str) -> bool:
        """`inside`, as a yes or no (a resolver made for one request answers it faster)."""
        return self.inside(rel) is not None

    def headings_of(self, catalogue: Catalogue, path: str) -> list[tuple[int, str]] | None:
        """The headings of the note at `path` as the disk holds it, read once per catalogue; None
        when it cannot be read."""
        if path not in catalogue.note_headings:
            lines = self.read_lines(path, MAX_HEADING_READ_BYTES)
            catalogue.note_headings[path] = list(headings(lines)) if lines is not None else None
        return catalogue.note_headings[path]

    def _at_heading(
        self, catalogue: Catalogue, note: Note, heading: str | None, source: str, source_lines: list[str],
        seen: HeadingLines,
    ) -> LinkTarget:
        line = 0
        if heading:
            if note.path == source and note.path not in seen:
                seen[note.path] = ({}, source_lines)
            if note.path in seen:  # the text the request reads the note by (the editor's, maybe unsaved)
                found, lines = seen[note.path]
                if heading not in found:
                    found[heading] = heading_line(lines, heading) or 0
                line = found[heading]
            else:
                anchor = (note.path, heading)
                if anchor not in catalogue.anchor_lines:
                    catalogue.anchor_lines[anchor] = heading_line_in(self.headings_of(catalogue, note.path) or [], heading) or 0
                line = catalogue.anchor_lines[anchor]
        return LinkTarget(note.path, line, note.title)
