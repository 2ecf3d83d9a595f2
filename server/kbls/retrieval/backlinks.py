"""References and backlinks of one root: the links (and tag uses) across its notes that name a
note, one of its headings, or a tag.

Candidates come from the index (`link_spans` by look-up key, `tag_spans` by tag: no file is
read per request); each candidate link is resolved by the resolver definition uses
(`LinkResolver.resolve`), and kept when its best target is the note (and, for a heading, when
its anchor names that heading as `heading_line` numbers them). A note open in the editor is read
from the editor's text (its links may be unsaved). An ambiguous `[[name]]` counts for the note it
opens (its best match), as in definition and document links.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kbls.links.forms import folder_keys, name_key, path_keys
from kbls.links.headings import heading_line
from kbls.links.names import Catalogue, Note
from kbls.links.resolve import HeadingLines
from kbls.links.suggest import NoteLinks
from kbls.links.syntax import LinkKind, LinkRef, heading_text
from kbls.links.view import NoteView, NoteViews
from kbls.retrieval.notetexts import NoteTexts, OpenNotes
from kbls.storage.records import LinkSpan, SourcedLink, Span
from kbls.storage.roles import Backend

_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
#: characters of the linking paragraph a backlink shows.
CONTEXT_CHARS = 240


@dataclass(frozen=True, slots=True)
class Target:
    """What references are asked of: a note (`heading_line` None), one of its headings (its
    0-based line), or a tag (`path` None)."""

    path: str | None
    heading_line: int | None = None
    tag: str | None = None


@dataclass(frozen=True, slots=True)
class Reference:
    """One link or tag use naming the target: in the note at `path`, at `span`."""

    path: str
    title: str
    span: Span
    #: "wiki", "path" or "tag".
    kind: str
    #: the link's anchor as written, if any.
    heading: str | None = None


@dataclass(frozen=True, slots=True)
class Backlink:
    """A note linking the target, for a picker: where, and the section and words around it."""

    reference: Reference
    breadcrumb: str
    context: str


def link_ref(span: LinkSpan, anchored: bool = True) -> LinkRef:
    """A stored link as the resolver reads one; without its anchor unless `anchored` (where it
    leads then needs no read of the note for the heading's line)."""
    where = span.span
    return LinkRef(LinkKind(span.kind), span.target, span.heading if anchored else None, where.line, where.start,
                   where.end, labelled=span.label is not None)


def note_keys(note: Note) -> set[str]:
    """The look-up keys (`LinkSpan.key`) of every link that may name `note`: its names' keys,
    and its path with and without `.md` (a markdown link's root-relative path)."""
    keys = {*folder_keys(note.path), *path_keys(note.path), name_key(note.title), *map(name_key, note.aliases)}
    keys.add(note.path)
    if note.path.endswith(".md"):
        keys.add(note.path[: -len(".md")])
    return {key for key in keys if key}


class LinkGraph:
    """References, backlinks and their counts for one root (`Engine.graph`)."""

    def __init__(self, links: NoteLinks, store: Backend, max_file_bytes: int) -> None:
        self.links = links
        self.store = store
        self.max_file_bytes = max_file_bytes
        #: closed notes read again since they were indexed, parsed once per content.
        self.views = NoteViews()

    def texts(self, open_notes: OpenNotes) -> NoteTexts:
        return NoteTexts(self.store, self.links.resolver, open_notes, self.views, self.max_file_bytes)

    # -- what is under the cursor ------------------------------------------------------------
    def target_at(self, path: str, view: NoteView, line: int, character: int) -> Target | None:
        """What references at (`line`, `character`) of the note at `path` (its text `view`) are
        of: a tag, the note or heading a link names, a heading, else the note itself; None on a
        link that leads nowhere."""
        text = view.lines
        if not 0 <= line < len(text):
            return Target(path)
        tag = view.tag_at(path, line, character)
        if tag is not None:
            return Target(None, tag=tag.tag)
        ref = view.link_at(line, character)
        if ref is not None:
            return self._link_target(path, ref, text)
        if view.is_heading(line) and not self._is_title(path, text, line):
            return Target(path, heading_line=line)
        return Target(path)

    def _link_target(self, path: str, ref: LinkRef, text: list[str]) -> Target | None:
        catalogue = self.links.catalogue()
        found = self.links.resolver.resolve(catalogue, path, ref, text)
        if not found or found[0].path not in catalogue.by_path:
            return None
        target = found[0].path
        if not ref.heading:
            return Target(target)
        lines = text if target == path else self.texts({}).lines(target)
        at = heading_line(lines, ref.heading)
        return Target(target, heading_line=at) if at is not None else Target(target)

    def _is_title(self, path: str, text: list[str], line: int) -> bool:
        """The heading at `line` is the note's title (its first H1, when the title is not in front matter)."""
        note = self.links.catalogue().by_path.get(path)
        heading = heading_text(text[line])
        return note is not None and heading is not None and text[line].lstrip().startswith("# ") and (
            heading == note.title
        )

    # -- references --------------------------------------------------------------------------
    def references(self, target: Target, open_notes: OpenNotes) -> list[Reference]:
        """Every link (or tag use) naming `target`, by note path and position."""
        if target.tag is not None:
            return self._tag_references(target.tag, open_notes)
        if target.path is None:
            return []
        catalogue = self.links.catalogue()
        note = catalogue.by_path.get(target.path)
        if note is None:
            return []
        return [ref for ref, _ in self.resolved_links(catalogue, note, target.heading_line, open_notes)]

    def resolved_links(
        self, catalogue: Catalogue, note: Note, heading: int | None, open_notes: OpenNotes,
    ) -> list[tuple[Reference, LinkSpan]]:
        """The stored links that name `note` (or its heading at line `heading`), each with its span.
        The open notes' links are read from their text."""
        keys = note_keys(note)
        stored = [s for s in self.store.links_to(keys) if s.path not in open_notes]
        if heading is not None:
            stored += [s for s in self.store.links_of(note.path) if s.link.key == "" and s.path not in open_notes]
        texts = self.texts(open_notes)
        resolver = texts.resolver
        target_lines = texts.lines(note.path)
        seen: HeadingLines = {note.path: ({}, target_lines)}
        anchors: dict[str, int | None] = {}
        candidates: list[SourcedLink] = list(stored)
        for path in open_notes:
            current = texts.current(path)
            if current is None:
                continue
            own = catalogue.by_path.get(path)
            title = own.title if own is not None else ""
            file_id = own.id if own is not None else 0
            candidates += [
                SourcedLink(file_id, path, title, link) for link in current.links
                if link.key in keys or (link.key == "" and path == note.path and heading is not None)
            ]
        out = []
        for found in candidates:
            ref = link_ref(found.link)
            source_lines = target_lines if found.path == note.path else []
            targets = resolver.resolve(catalogue, found.path, ref, source_lines, seen)
            if not targets or targets[0].path != note.path:
                continue
            if heading is not None:
                if not ref.heading:
                    continue
                if ref.heading not in anchors:
                    anchors[ref.heading] = heading_line(target_lines, ref.heading)
                if anchors[ref.heading] != heading:
                    continue
            elif found.link.key == "":
                continue  # a note's links to its own headings are not backlinks of the note
            out.append((Reference(found.path, found.title, found.link.span, found.link.kind, ref.heading), found.link))
        out.sort(key=lambda pair: (pair[0].path, pair[0].span.line, pair[0].span.start))
        return out

    def _tag_references(self, tag: str, open_notes: OpenNotes) -> list[Reference]:
        stored = [s for s in self.store.tag_uses(tag) if s.path not in open_notes]
        out = [Reference(s.path, s.title, s.tag.span, "tag") for s in stored]
        texts = self.texts(open_notes)
        catalogue = self.links.catalogue()
        for path in open_notes:
            current = texts.current(path)
            own = catalogue.by_path.get(path)
            if current is not None:
                out += [
                    Reference(path, own.title if own else "", t.span, "tag") for t in current.tags
                    if t.tag == tag or t.tag.startswith(f"{tag}/")
                ]
        return sorted(out, key=lambda r: (r.path, r.span.line, r.span.start))

    # -- backlinks ---------------------------------------------------------------------------
    def backlinks(self, path: str, open_notes: OpenNotes) -> list[Backlink]:
        """The links from other notes to the note at `path`, each with its section and the words
        around it, by linking note."""
        found = [r for r in self.references(Target(path), open_notes) if r.path != path]
        texts = self.texts(open_notes)
        chunks = self.store.chunks_at([(r.path, r.span.line) for r in found])
        out = []
        for ref in found:
            breadcrumb = chunks.get((ref.path, ref.span.line), (ref.title or ref.path, "", 0))[0]
            out.append(Backlink(ref, breadcrumb, _paragraph(texts.lines(ref.path), ref.span.line)))
        return out

    def count(self, path: str, open_notes: OpenNotes) -> int:
        """How many other notes link to the note at `path`."""
        return len({r.path for r in self.references(Target(path), open_notes) if r.path != path})


def _paragraph(lines: Iterable[str], line: int) -> str:
    """The paragraph (or list item) holding `line` as one line of words, cut to CONTEXT_CHARS."""
    rows = list(lines)
    if not 0 <= line < len(rows):
        return ""
    first = last = line
    if _LIST_ITEM.match(rows[line]):  # a list item is its own paragraph, with its indented lines
        while last + 1 < len(rows) and rows[last + 1].strip() and not _LIST_ITEM.match(rows[last + 1]) and (
            rows[last + 1][:1].isspace()
        ):
            last += 1
    else:
        while first > 0 and rows[first - 1].strip() and not _LIST_ITEM.match(rows[first - 1]):
            first -= 1
        while last + 1 < len(rows) and rows[last + 1].strip() and not _LIST_ITEM.match(rows[last + 1]):
            last += 1
    words = " ".join(" ".join(rows[first : last + 1]).split())
    return words if len(words) <= CONTEXT_CHARS else words[: CONTEXT_CHARS - 1] + "…"
