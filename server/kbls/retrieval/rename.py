"""Rename of a note's title, a heading or a tag, and the link edits a file or folder move needs:
plans of text edits over the notes of one root as they are now (`NoteTexts`: the editor's text
for an open note), computed from the index's links and tags (`LinkGraph`), never applied here.

Links are rewritten in the form they were written in: a `[[Title]]` gets the new title, a
`[[stem]]` the new file name, a `[[dir/stem]]` the new path, a markdown link the new relative
path (percent-encoded, or in `<…>`), an anchor the new heading as text or as its GitHub slug;
labels stay as written. A new name that would make a link name another note too is written by
the note's file name or path instead. Nothing outside the root is read or edited.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from kbls.errors import QueryError
from kbls.indexing.parse import INLINE_TAG
from kbls.indexing.spans import span
from kbls.links.edits import (
    Edit,
    anchor_for,
    heading_text_edit,
    markdown_fragment_edit,
    markdown_path_edit,
    path_moved,
    title_edit,
    title_line,
    wiki_heading_edit,
    wiki_name_edit,
)
from kbls.links.forms import WIKI_NAME_STOPS, folder_keys, name_key, path_keys
from kbls.links.headings import heading_line, headings
from kbls.links.names import Catalogue, LinkStyle, Note, WikiForm
from kbls.links.resolve import LinkResolver
from kbls.links.syntax import heading_slug, heading_text
from kbls.links.view import NoteView
from kbls.notepath import note_stem
from kbls.retrieval.backlinks import LinkGraph, link_ref, note_keys
from kbls.retrieval.notetexts import CurrentNote, NoteTexts, OpenNotes
from kbls.storage.records import LinkSpan, SourcedLink, Span

_NOT_IN_NAME = re.compile(f"[{WIKI_NAME_STOPS}]")


class RenameError(QueryError):
    """A rename that cannot be made here (said to the user as the request's error)."""


@dataclass(frozen=True, slots=True)
class RenameTarget:
    """What a rename at a position renames: "title", "heading" or "tag", and the range of the
    name at the cursor (in the note asked about) with its text."""

    kind: str
    path: str | None
    span: Span
    placeholder: str
    #: the heading's 0-based line ("heading"), the tag ("tag").
    heading_line: int | None = None
    tag: str | None = None


@dataclass(frozen=True, slots=True)
class NoteEdits:
    """The edits of one note, over the text they were computed on (`lines`)."""

    path: str
    lines: list[str]
    edits: list[Edit]
    #: the text is the editor's (send its version with the edits).
    open: bool


@dataclass(frozen=True, slots=True)
class RenamePlan:
    notes: list[NoteEdits] = field(default_factory=list)


class Renamer:
    """Plans renames in one root (`Engine.renames`)."""

    def __init__(self, graph: LinkGraph) -> None:
        self.graph = graph
        self.links = graph.links

    # -- what is renamed -----------------------------------------------------------------------
    def prepare(self, path: str, view: NoteView, line: int, character: int) -> RenameTarget:
        """What a rename at (`line`, `character`) of the note at `path` (its text `view`)
        renames. :raises RenameError: nothing there."""
        text = view.lines
        target = self.graph.target_at(path, view, line, character)
        note = self.links.catalogue().by_path.get(target.path or "") if target is not None else None
        where = _name_span(path, view, line, character)
        if target is not None and target.tag is not None:
            return RenameTarget("tag", None, where, target.tag, tag=target.tag)
        if target is None or note is None:
            raise RenameError("this link leads to no note: there is nothing to rename")
        on_link = view.link_at(line, character) is not None
        if target.heading_line is not None:
            heading = self._heading(note.path, target.heading_line, text if note.path == path else None)
            return RenameTarget("heading", note.path, where, heading, heading_line=target.heading_line)
        if not on_link and title_line(text, note.title) != line:
            raise RenameError("put the cursor on the note's title, a heading, a link or a tag to rename it")
        if title_line(text if note.path == path else self.graph.texts({}).lines(note.path), note.title) is None:
            raise RenameError(
                f"the title of {note.path} is its file name: rename the file to rename the note (its links follow)"
            )
        return RenameTarget("title", note.path, where, note.title)

    def _heading(self, path: str, line: int, own: list[str] | None) -> str:
        lines = own if own is not None else self.graph.texts({}).lines(path)
        found = heading_text(lines[line]) if line < len(lines) else None
        if found is not None:
            return found
        # setext: its text may run over several lines, read as the one heading reader reads it
        return next((text for number, text in headings(lines) if number == line), lines[line].strip())

    # -- renames -------------------------------------------------------------------------------
    def rename(self, path: str, view: NoteView, line: int, character: int, new_name: str, open_notes: OpenNotes) -> RenamePlan:
        target = self.prepare(path, view, line, character)
        new_name = new_name.strip()
        if not new_name:
            raise RenameError("the new name is empty")
        opened = {**open_notes, path: view}
        if target.kind == "tag" and target.tag is not None:
            return self.rename_tag(target.tag, new_name, opened)
        assert target.path is not None
        if target.kind == "heading" and target.heading_line is not None:
            return self.rename_heading(target.path, target.heading_line, new_name, opened)
        return self.rename_title(target.path, new_name, opened)

    def rename_title(self, path: str, new_title: str, open_notes: OpenNotes) -> RenamePlan:
        catalogue = self.links.catalogue()
        note = catalogue.by_path[path]
        texts = self.graph.texts(open_notes)
        plan = _Plan(texts)
        own = texts.current(path)
        edit = title_edit(own.lines, note.title, new_title) if own is not None else None
        if own is None or edit is None:
            raise RenameError(f"the title of {path} is its file name: rename the file to rename the note")
        plan.add(own, edit)
        by_title = name_key(note.title)
        file_names = {*path_keys(note.path), *folder_keys(note.path)}
        # `[[name]]` that is both the title and the file name: the workspace's habit says which it
        # means; only a workspace that links by file name keeps it (it still leads here).
        by_file_name = self.links.style(catalogue, []).form == WikiForm.STEM
        name = self._unique_name(catalogue, note, new_title)
        for current, link in self._fresh_links(catalogue, note, None, texts):
            key = name_key(link.target)
            if link.kind != "wiki" or key != by_title or (key in file_names and by_file_name):
                continue
            plan.add(current, wiki_name_edit(current.lines[link.span.line], link, name))
        return plan.done()

    def _unique_name(self, catalogue: Catalogue, note: Note, title: str) -> str:
        """`title` when `[[title]]` would name only `note`, else its file name or path."""
        others = [n for n in catalogue.named(title, note.path) if n.path != note.path]
        if not others and not _NOT_IN_NAME.search(title):
            return title
        return catalogue.wiki_name(note, LinkStyle(WikiForm.STEM))

    def rename_heading(self, path: str, line: int, new_text: str, open_notes: OpenNotes) -> RenamePlan:
        catalogue = self.links.catalogue()
        note = catalogue.by_path[path]
        texts = self.graph.texts(open_notes)
        plan = _Plan(texts)
        own = texts.current(path)
        if own is None or line >= len(own.lines):
            raise RenameError(f"cannot read {path}")
        old_text = self._heading(path, line, own.lines)
        plan.add(own, heading_text_edit(own.lines, line, new_text))
        for current, link in self._fresh_links(catalogue, note, line, texts):
            row = current.lines[link.span.line]
            written = link.heading or ""
            anchor = anchor_for(written, old_text, new_text)
            if link.kind == "wiki" and _NOT_IN_NAME.search(anchor):
                anchor = heading_slug(new_text)  # `[[n#Pros | Cons]]` would end the anchor at `|`
            edit = wiki_heading_edit(row, link, anchor) if link.kind == "wiki" else markdown_fragment_edit(row, link, anchor)
            plan.add(current, edit)
        return plan.done()

    def rename_tag(self, tag: str, new_tag: str, open_notes: OpenNotes) -> RenamePlan:
        new_tag = new_tag.lstrip("#")
        if not INLINE_TAG.fullmatch("#" + new_tag):
            raise RenameError(f"{new_tag!r} is not a tag (letters, digits, `_`, `-` and `/`, starting with a letter)")
        texts = self.graph.texts(open_notes)
        plan = _Plan(texts)
        for current in texts.of_tags(self.graph.store.tag_uses(tag)):
            for use in current.tags:
                if use.tag != tag and not use.tag.startswith(f"{tag}/"):
                    continue
                start = use.span.start + (0 if use.front_matter else 1)
                # the tag as written (`İstanbul`), not its lowercase (`i̇stanbul`, one longer)
                written = "/".join(use.written.split("/")[: tag.count("/") + 1])
                plan.add(current, Edit(use.span.line, start, start + len(written), new_tag))
        return plan.done()

    # -- moves ---------------------------------------------------------------------------------
    def moves(self, moves: list[tuple[str, str]], open_notes: OpenNotes) -> RenamePlan:
        """The edits that keep every link leading where it led once the files or folders of
        `moves` ((old, new) root-relative paths) are moved: made against the text before the move."""
        catalogue = self.links.catalogue()
        texts = self.graph.texts(open_notes)
        plan = _Plan(texts)
        moved_notes = [n for n in catalogue.notes if path_moved(n.path, moves) is not None]
        keys: set[str] = set()
        for note in moved_notes:
            keys |= note_keys(note)
        for old, _ in moves:
            keys |= {old, old.removesuffix(".md")}
        found = self.graph.store.links_to(keys) + self.graph.store.links_under([old for old, _ in moves])
        for note in moved_notes:
            found += self.graph.store.links_of(note.path)
        # A title written in the note survives the move; one taken from the file name does not.
        titled = {n.path for n in moved_notes if title_line(texts.lines(n.path), n.title) is not None}
        for current in texts.of_links(_unique(found)):
            new_source = path_moved(current.path, moves) or current.path
            for link in current.links:
                edit = self._moved_link(catalogue, texts.resolver, current, link, new_source, moves, titled)
                plan.add(current, edit)
        return plan.done()

    def _moved_link(
        self, catalogue: Catalogue, resolver: LinkResolver, current: CurrentNote, link: LinkSpan, new_source: str,
        moves: list[tuple[str, str]], titled: set[str],
    ) -> Edit | None:
        ref = link_ref(link, anchored=False)  # where it leads, not which line: no file read
        targets = resolver.resolve(catalogue, current.path, ref, current.lines)
        if not targets:
            return None
        old_target = targets[0].path
        new_target = path_moved(old_target, moves)
        row = current.lines[link.span.line]
        if link.kind == "path":
            if not link.target or (new_target is None and new_source == current.path):
                return None  # `[below](#part)` names its own note wherever it lives
            keep_extension = link.key == old_target
            return markdown_path_edit(row, link, new_source, new_target or old_target, keep_extension)
        if new_target is None or old_target not in catalogue.by_path:
            return None
        note = catalogue.by_path[old_target]
        return self._moved_wiki(catalogue, note, link, row, new_target, moves, note.path in titled)

    def _moved_wiki(
        self, catalogue: Catalogue, note: Note, link: LinkSpan, row: str, new_target: str,
        moves: list[tuple[str, str]], titled: bool,
    ) -> Edit | None:
        key = name_key(link.target)
        bare, path_key = folder_keys(note.path)
        stem, file_name = path_keys(note.path)
        new_bare = new_target.removesuffix(".md") if new_target.endswith(".md") else new_target.rsplit(".", 1)[0]
        if (titled and key == name_key(note.title)) or key in map(name_key, note.aliases):
            return None  # by title or alias: a move leaves it right
        if key in (bare, path_key):
            name = new_target if key == path_key else new_bare
        elif key in (stem, file_name):
            new_stem = note_stem(new_target)
            name = new_target.rsplit("/", 1)[-1] if key == file_name and key != stem else new_stem
            clash = [
                n for n in catalogue.by_file_name.get(name_key(new_stem), [])
                if n.path != note.path and path_moved(n.path, moves) is None
            ]
            if clash:
                name = new_bare
        else:
            return None
        if _NOT_IN_NAME.search(name):  # `[[dir/Old #1]]` would end the name at `#`
            if not titled or _NOT_IN_NAME.search(note.title) or len(catalogue.named(note.title, note.path)) > 1:
                return None
            name = note.title
        return wiki_name_edit(row, link, name)

    def _fresh_links(
        self, catalogue: Catalogue, note: Note, heading: int | None, texts: NoteTexts
    ) -> Iterable[tuple[CurrentNote, LinkSpan]]:
        """The links naming `note` (or its heading at `heading`) where they are now."""
        keys = note_keys(note)
        stored = self.graph.store.links_to(keys)
        if heading is not None:
            stored += [s for s in self.graph.store.links_of(note.path) if s.link.key == ""]
        target_lines = texts.lines(note.path)
        anchors: dict[str, int | None] = {}
        for current in texts.of_links(_unique(stored)):
            for link in current.links:
                own_anchor = link.key == "" and current.path == note.path
                if link.key not in keys and not (own_anchor and heading is not None):
                    continue
                ref = link_ref(link, anchored=False)
                targets = texts.resolver.resolve(catalogue, current.path, ref, current.lines)
                if not targets or targets[0].path != note.path:
                    continue
                if heading is not None:
                    if not link.heading:
                        continue
                    if link.heading not in anchors:
                        anchors[link.heading] = heading_line(target_lines, link.heading)
                    if anchors[link.heading] != heading:
                        continue
                yield current, link


def _name_span(path: str, view: NoteView, line: int, character: int) -> Span:
    """The range a rename at the cursor shows: the tag, the link, or the heading's text there."""
    tag = view.tag_at(path, line, character)
    if tag is not None:
        return tag.span
    text = view.lines
    row = text[line] if 0 <= line < len(text) else ""
    ref = view.link_at(line, character)
    if ref is not None:
        return span(row, line, ref.start, ref.end)
    edit = heading_text_edit(text, line, "\0") if row.strip() else None
    if edit is not None:  # a heading over several lines (setext) shows its first line's text
        return span(row, line, edit.start, edit.end if edit.end_line is None else len(row.rstrip()))
    return span(row, line, character, character)


def _unique(found: list[SourcedLink]) -> list[SourcedLink]:
    return list({(s.path, s.link.span.line, s.link.span.start): s for s in found}.values())


class _Plan:
    """Edits gathered per note; two edits of one range are one."""

    def __init__(self, texts: NoteTexts) -> None:
        self.texts = texts
        self._notes: dict[str, tuple[CurrentNote, dict[tuple[int, int, int, int], Edit]]] = {}

    def add(self, note: CurrentNote, edit: Edit | None) -> None:
        if edit is None:
            return
        edits = self._notes.setdefault(note.path, (note, {}))[1]
        edits[(edit.line, edit.start, edit.last_line, edit.end)] = edit

    def done(self) -> RenamePlan:
        return RenamePlan([
            NoteEdits(path, note.lines, sorted(edits.values(), key=lambda e: (e.line, e.start)), note.open)
            for path, (note, edits) in sorted(self._notes.items())
        ])
