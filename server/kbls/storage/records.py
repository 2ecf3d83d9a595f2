"""Typed rows that go into the store and come out of it; no caller reads a row by string key."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kbls.links.forms import folder_keys, name_key, path_keys


@dataclass(frozen=True)
class FileRow:
    """What the indexer needs to know of a stored file to decide whether it changed."""

    id: int
    path: str
    hash: str | None  # None: the file was skipped (see `error`)
    size: int
    mtime_ns: int
    error: str | None


@dataclass(frozen=True)
class ChunkRecord:
    """A chunk ready to be written: its vector is stored already or passed in `vectors`."""

    chunk_id: str
    ord: int
    hash: str
    start_line: int
    end_line: int
    breadcrumb: str
    body: str


@dataclass(frozen=True)
class NoteRecord:
    """One parsed file, written in one transaction (`Store.write_note`)."""

    path: str
    hash: str
    size: int
    mtime_ns: int
    title: str
    kind: str
    note_type: str | None
    aliases: list[str]
    tags: list[str]
    links: list[tuple[str, str]]  # (kind: "path" or "wiki", target)
    chunks: list[ChunkRecord]
    warning: str | None
    #: links and tags with their positions (markdown notes only).
    spans: NoteSpans = field(default_factory=lambda: NoteSpans())


@dataclass(frozen=True, slots=True)
class StoreCounts:
    files: int  # files indexed (skipped files, which have no hash, are not counted)
    chunks: int
    vectors: int  # distinct chunk texts with a stored vector
    #: chunks whose text waits for its vector (written by the lexical first pass)
    waiting: int = 0


class ChunkRow(NamedTuple):
    """A chunk with what a hit shows of it and of its file. A named tuple, not a frozen
    dataclass: a search reads about 135 of them, built in 0.02 ms instead of 0.11 ms."""

    id: int  # the chunk's rowid (also its FTS5 rowid)
    path: str
    start_line: int
    end_line: int
    breadcrumb: str
    body: str
    title: str
    embedding_id: int
    file_id: int
    #: the chunk's extra word-index tokens (the FTS `terms` column: CamelCase parts, CJK bigrams).
    terms: str = ""


@dataclass(frozen=True, slots=True)
class FileChunk:
    """A chunk of one file, in file order (`Store.file_chunks`)."""

    id: int
    start_line: int
    end_line: int
    embedding_id: int
    breadcrumb: str


@dataclass(frozen=True, slots=True)
class NoteName:
    """What a link may name a note by (`Store.note_names`, `Store.file_info`): link completion and
    resolution, and the names related notes look for in other notes' links."""

    id: int
    path: str
    title: str
    aliases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ListedFile:
    """An indexed note in a listing by modification time (`Store.recent_files`)."""

    id: int
    path: str
    title: str
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Span:
    """Where something is written in a note: a 0-based line and its columns, end exclusive, in
    code points (Python's string indices), UTF-16 units and UTF-8 bytes (what editors count),
    so a position is answered in the editor's units without reading the note."""

    line: int
    start: int
    end: int
    start16: int
    end16: int
    start8: int
    end8: int

    def columns(self, encoding: str) -> tuple[int, int]:
        """(start, end) in "utf-8", "utf-16" or "utf-32" (code points) units."""
        if encoding == "utf-8":
            return self.start8, self.end8
        if encoding == "utf-32":
            return self.start, self.end
        return self.start16, self.end16


@dataclass(frozen=True, slots=True)
class LinkSpan:
    """One link as a note writes it (`kbls.indexing.spans`): what references, rename and broken
    link checks read instead of the files. The target note is not stored: which note a name
    names changes when another note is added or retitled, so it is resolved when read
    (`kbls.links.resolve.LinkResolver`, the resolver definition uses)."""

    kind: str  # "wiki" or "path"
    #: wiki: the name as written (may be empty: `[[#heading]]`); path: the URL-decoded path.
    target: str
    #: the look-up key: wiki, `linkforms.name_key(target)`; path, the root-relative path;
    #: "" for a link into this note; None for a path that leaves the root.
    key: str | None
    heading: str | None
    #: the label as written (`[[name|label]]`, `[label](path)`); None for `[[name]]`.
    label: str | None
    span: Span


@dataclass(frozen=True, slots=True)
class TagSpan:
    """One tag as a note writes it: inline (`#tag`, `#parent/child`, the span holds the `#`) or
    in the front matter's `tags:` (the span is the tag's text)."""

    #: as the `tags` table keeps it: lowercase, without `#`.
    tag: str
    #: as written, without `#`.
    written: str
    front_matter: bool
    span: Span


@dataclass(frozen=True, slots=True)
class NoteSpans:
    """Every link and tag a note writes, with where (`NoteRecord.spans`)."""

    links: tuple[LinkSpan, ...] = ()
    tags: tuple[TagSpan, ...] = ()


@dataclass(frozen=True, slots=True)
class SourcedLink:
    """A stored link with the note that writes it (`StoreReads.links_to`, `links_of`)."""

    file_id: int
    path: str
    title: str
    link: LinkSpan


@dataclass(frozen=True, slots=True)
class SourcedTag:
    """A stored tag with the note that writes it (`StoreReads.tag_uses`)."""

    file_id: int
    path: str
    title: str
    tag: TagSpan


def link_order(link: SourcedLink) -> tuple[str, int, int]:
    """Links in reading order: by note, then line, then column."""
    return link.path, link.link.span.line, link.link.span.start


def link_from_row(row: Any) -> SourcedLink:
    """A stored link as both backends select it: the note's id, path and title, the link, its span."""
    file_id, path, title, kind, target, key, heading, label, *where = row
    return SourcedLink(int(file_id), str(path), str(title), LinkSpan(kind, target, key, heading, label, Span(*where)))


def tag_from_row(row: Any) -> SourcedTag:
    """A stored tag as both backends select it: the note's id, path and title, the tag, its span."""
    file_id, path, title, tag, written, front_matter, *where = row
    return SourcedTag(int(file_id), str(path), str(title), TagSpan(tag, written, bool(front_matter), Span(*where)))


def notes_by_name_key(notes: Iterable[NoteName]) -> dict[str, frozenset[int]]:
    """name key -> the notes that name is one of: each note's path and folder forms, title and
    aliases compared by `name_key` (how both backends resolve `[[name]]` links)."""
    found: dict[str, set[int]] = {}
    for note in notes:
        for key in {*path_keys(note.path), *folder_keys(note.path), name_key(note.title), *map(name_key, note.aliases)}:
            found.setdefault(key, set()).add(note.id)
    return {key: frozenset(ids) for key, ids in found.items()}
