"""Links between notes: which note a link names, and how this workspace writes its links.

`Catalogue` is a snapshot of every note's names (path, file stem, title, aliases), reloaded
when the store changes. A `[[name]]` resolves as the store resolves it for related notes
(`StoreReads.resolve_link_targets`): the file stem or file name (with a `/`: the path without
or with its extension), the title or an alias, compared by `linkforms.name_key` (case and
Unicode form ignored); an ambiguous name names every note it matches, best first (path or
file name, title, alias; then the nearest folder). A markdown link's path is relative
to the note (or to the root with a leading `/`). Nothing outside the root is ever named: a
path that leaves it resolves to nothing, and only indexed notes and files inside the root's
real folder are answered.

`LinkStyle` is how the workspace writes wiki links (`[[Title]]`, `[[stem]]`, `[[dir/stem]]`,
each with or without `|label`), detected from the links of a sample of its notes and of the
note being edited.
"""

from __future__ import annotations

import bisect
import posixpath
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum

from kbls.links.forms import WIKI_NAME_STOPS, folder_keys, name_key, path_keys
from kbls.links.syntax import LinkKind, link_label, links_in
from kbls.notepath import note_stem
from kbls.storage.records import NoteName

#: how many of the workspace's linking notes are read to learn its link style, and how much of each.
STYLE_SAMPLE_FILES = 25
STYLE_SAMPLE_BYTES = 64 * 1024

_WORD_START = re.compile(r"(?<=[\s\-_/.])\w")
#: what would end a wiki link's name, or either link's label, early (`kbls.links.forms`).
_NOT_IN_WIKI_NAME = re.compile(f"[{WIKI_NAME_STOPS}]")
#: a name with a later word starting with what was typed counts this much of a full prefix.
WORD_MATCH = 0.7
#: how much of a name its prefix keys cover (a key per word start: a longer name, such as an alias
#: of thousands of words, would cost quadratic memory; a title is cut at 300 characters too).
NAME_KEY_CHARS = 300
#: the names a typed prefix is matched against, in the order a tie is reported.
NAME_KINDS = ("title", "alias", "file name", "path")


class WikiForm(str, Enum):
    """What a workspace's `[[…]]` names a note by."""

    TITLE = "title"
    STEM = "stem"
    PATH = "path"


@dataclass(frozen=True, slots=True)
class LinkStyle:
    form: WikiForm = WikiForm.TITLE
    #: `[[name|Title]]` rather than `[[name]]`.
    labelled: bool = False


@dataclass(frozen=True, slots=True)
class Note(NoteName):
    """One note's names, and its path without the extension (case kept), which a link may name it by."""

    bare: str

    @classmethod
    def of(cls, row: NoteName) -> Note:
        return cls(row.id, row.path, row.title, row.aliases, posixpath.splitext(row.path)[0])


@dataclass(frozen=True, slots=True)
class KeptProblem:
    """A link's problem as `kbls.editing.linkcheck` found it (kind, message, notes; None: no
    problem), and the notes the link leads to: the answer holds for a link written the same way
    in any note of the folder but these (in one of them it is a link into its own text)."""

    problem: tuple[str, str, tuple[str, ...]] | None
    targets: frozenset[str]


@dataclass
class Catalogue:
    """Every note by the names a link may use (built once per store change)."""

    notes: list[Note]
    #: `StoreReads.notes_version` of the files it was read from.
    version: tuple[int, int, float] = (0, 0, 0.0)
    by_path: dict[str, Note] = field(default_factory=dict)
    #: the rest by `name_key`: the path without its extension, and the whole path (`[[dir/name]]`).
    by_folder_path: dict[str, list[Note]] = field(default_factory=dict)
    #: the file stem, and the file name (`[[name]]`, `[[name.md]]`).
    by_file_name: dict[str, list[Note]] = field(default_factory=dict)
    by_title: dict[str, list[Note]] = field(default_factory=dict)
    by_alias: dict[str, list[Note]] = field(default_factory=dict)
    #: every name's key (its first NAME_KEY_CHARS) and every word-start suffix of that, sorted,
    #: for prefix look-ups;
    #: `_entries[i]` is (note index, name kind index, score) of `_keys[i]`.
    _keys: list[str] = field(default_factory=list)
    _entries: list[tuple[int, int, float]] = field(default_factory=list)
    #: what the resolver learnt while this catalogue was current (the notes a link's text names
    #: from a folder; each note's headings, read once): a new catalogue is made whenever a note
    #: is added, removed or re-indexed, so these never outlive the files they were read from.
    link_notes: dict[tuple[str, str, str], list[Note] | None] = field(default_factory=dict, repr=False)
    note_headings: dict[str, list[tuple[int, str]] | None] = field(default_factory=dict, repr=False)
    anchor_lines: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    #: `kbls.editing.linkcheck`'s notes a wiki name finds by its first kind of name, by folder,
    #: and the problems of links by (the folder of the note they are written in, kind, target, heading).
    answering: dict[tuple[str, str], list[str]] = field(default_factory=dict, repr=False)
    link_problems: dict[tuple[str, str, str, str | None], KeptProblem] = field(default_factory=dict, repr=False)
    #: when the above were last emptied (`time.monotonic`).
    learnt_since: float = field(default_factory=time.monotonic, repr=False)

    @classmethod
    def of(cls, rows: list[NoteName], version: tuple[int, int, float] = (0, 0, 0.0)) -> Catalogue:
        made = cls([Note.of(row) for row in rows], version)
        pairs: list[tuple[str, tuple[int, int, float]]] = []
        for index, note in enumerate(made.notes):
            made.by_path[note.path] = note
            for key in dict.fromkeys(folder_keys(note.path)):
                made.by_folder_path.setdefault(key, []).append(note)
            for key in dict.fromkeys(path_keys(note.path)):
                made.by_file_name.setdefault(key, []).append(note)
            made.by_title.setdefault(name_key(note.title), []).append(note)
            for alias in note.aliases:
                made.by_alias.setdefault(name_key(alias), []).append(note)
            names = [(0, note.title), *((1, a) for a in note.aliases), (2, note.path.rsplit("/", 1)[-1]), (3, note.path)]
            for kind, name in names:
                keyed = name_key(name)[:NAME_KEY_CHARS]
                pairs.append((keyed, (index, kind, 1.0)))
                pairs.extend((keyed[m.start() :], (index, kind, WORD_MATCH)) for m in _WORD_START.finditer(keyed))
        pairs.sort(key=lambda pair: pair[0])
        made._keys = [key for key, _ in pairs]
        made._entries = [entry for _, entry in pairs]
        return made

    def forget_learnt(self) -> None:
        """Empty what the resolver learnt from the disk (a request reading the old maps meanwhile
        keeps them), so the next checks read the files again."""
        self.link_notes, self.note_headings, self.anchor_lines, self.link_problems = {}, {}, {}, {}
        self.learnt_since = time.monotonic()

    def name_matches(self, typed: str) -> dict[str, tuple[float, str]]:
        """path -> (1.0, kind) for notes a name of which starts with `typed` (compared by
        `name_key`, a leading `./` or `../` ignored), (WORD_MATCH, kind) where only a later word does."""
        wanted = name_key(typed).lstrip("./")
        if not wanted:
            return {}
        best: dict[int, tuple[float, int]] = {}
        at = bisect.bisect_left(self._keys, wanted)
        while at < len(self._keys) and self._keys[at].startswith(wanted):
            index, kind, score = self._entries[at]
            known = best.get(index)
            if known is None or (score, -kind) > (known[0], -known[1]):
                best[index] = (score, kind)
            at += 1
        return {self.notes[i].path: (score, NAME_KINDS[kind]) for i, (score, kind) in best.items()}

    def named(self, name: str, source: str) -> list[Note]:
        """The notes `[[name]]` names, best first (see the module docstring)."""
        key = name_key(name)
        groups = (
            self.by_folder_path.get(key, []) if "/" in key else self.by_file_name.get(key, []),
            self.by_title.get(key, []),
            self.by_alias.get(key, []),
        )
        here = posixpath.dirname(source)
        out: dict[str, Note] = {}
        for group in groups:
            for note in sorted(group, key=lambda n: (posixpath.dirname(n.path) != here, len(n.path), n.path)):
                out.setdefault(note.path, note)
        return list(out.values())

    def wiki_form(self, target: str) -> WikiForm | None:
        """Which name `[[target]]` uses; None when it matches none or reads as several."""
        key = name_key(target)
        if "/" in key:
            return WikiForm.PATH if key in self.by_folder_path else None
        is_stem = key in self.by_file_name
        is_title = key in self.by_title or key in self.by_alias
        if is_stem and not is_title:
            return WikiForm.STEM
        if is_title and not is_stem:
            return WikiForm.TITLE
        return None

    def wiki_name(self, note: Note, style: LinkStyle) -> str:
        """What goes between `[[` and `]]` for `note` in `style` (without the label)."""
        if style.form == WikiForm.TITLE and self._writable(note.title, note):
            return note.title
        if style.form in (WikiForm.TITLE, WikiForm.STEM) and self._writable(note_stem(note.path), note):
            return note_stem(note.path)
        return note.bare

    def _writable(self, name: str, note: Note) -> bool:
        """`[[name]]` can be written (no `#`, `|` or bracket cuts it short) and names only `note`."""
        return bool(name) and not _NOT_IN_WIKI_NAME.search(name) and self._only(name, note)

    def _only(self, name: str, note: Note) -> bool:
        """`[[name]]` names `note` and no other (else a link by it would be ambiguous)."""
        return [n.path for n in self.named(name, note.path)] == [note.path]


@dataclass(frozen=True, slots=True)
class StyleCounts:
    """How many wiki links name notes by each form, and how many carry a `|label`."""

    forms: tuple[tuple[WikiForm, int], ...] = ()
    labelled: int = 0
    plain: int = 0

    def __add__(self, other: StyleCounts) -> StyleCounts:
        forms = Counter(dict(self.forms)) + Counter(dict(other.forms))
        return StyleCounts(tuple(forms.items()), self.labelled + other.labelled, self.plain + other.plain)

    def style(self) -> LinkStyle:
        """The form most links use (titles when none tells) and the label habit of most."""
        forms = sorted(self.forms, key=lambda pair: (-pair[1], list(WikiForm).index(pair[0])))
        return LinkStyle(forms[0][0] if forms else WikiForm.TITLE, self.labelled > self.plain)


def count_styles(catalogue: Catalogue, texts: list[list[str]]) -> StyleCounts:
    """The wiki link forms and labels in `texts` (each the lines of a note)."""
    forms: Counter[WikiForm] = Counter()
    labelled = plain = 0
    for lines in texts:
        for ref in links_in(lines):
            if ref.kind != LinkKind.WIKI or not ref.target:
                continue
            form = catalogue.wiki_form(ref.target)
            if form is not None:
                forms[form] += 1
            if ref.labelled:
                labelled += 1
            else:
                plain += 1
    return StyleCounts(tuple(forms.items()), labelled, plain)


def wiki_insert(catalogue: Catalogue, note: Note, style: LinkStyle) -> str:
    """The text after `[[` that links `note`, closing brackets included."""
    name = catalogue.wiki_name(note, style)
    needs_label = style.labelled or (style.form == WikiForm.TITLE and name != note.title)
    label = link_label(note.title)
    if needs_label and label and name != note.title:
        return f"{name}|{label}]]"
    return f"{name}]]"
