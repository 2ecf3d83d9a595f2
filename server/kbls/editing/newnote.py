"""The note a quick fix creates for a link to no note: where it goes and what it starts with.

A markdown link names its path; a wiki name (`[[Grocery list]]`) goes in the folder where the
notes nearest in meaning to the link's words and sentence live (the folder of the five nearest
that weighs most, each note by its cosine, none under 0.25; the linking note's folder while the
model is not loaded or when none is near), named as that folder's notes are named
(`grocery-list.md` beside `kebab-case.md` files, else `Grocery list.md`), with front matter like
its siblings' (the keys most of them have: the title, today's date for a date key, a `type:`
most of them share, empty lists for tags and aliases) and an H1 where they have one.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import posixpath
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kbls.editing.linkcheck import link_words
from kbls.links.names import Catalogue
from kbls.links.resolve import LinkResolver, relative_target
from kbls.links.suggest import LinkQuery, NoteLinks
from kbls.links.syntax import ATX_HEADING, LinkKind, LinkRef

#: nearest notes by meaning whose folders vote for the new note's folder, each by its cosine,
#: none below the floor (in a small vault the fifth nearest note is no neighbour).
FOLDER_VOTERS = 5
FOLDER_VOTE_FLOOR = 0.25
#: sibling notes read to learn their front matter and naming (their first bytes only).
SIBLINGS = 12
SIBLING_BYTES = 4096
NOTE_SUFFIXES = (".md", ".markdown")
_SLUG_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_NOT_IN_FILE_NAME = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f]')
_KEY_VALUE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")
_DATE_KEYS = {"date", "created", "updated", "modified", "created_at", "updated_at", "date_created"}
_LIST_KEYS = {"tags", "tag", "aliases", "alias", "keywords"}
_SHARED_KEYS = {"type", "kind", "category", "status", "layout"}


@dataclass(frozen=True, slots=True)
class NewNote:
    #: root-relative path of the file to create.
    path: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class _Sibling:
    stem: str
    keys: tuple[tuple[str, str], ...]
    has_front_matter: bool
    has_h1: bool


def new_note(
    links: NoteLinks, catalogue: Catalogue, resolver: LinkResolver, source: str, ref: LinkRef, title: str,
    sentence: str, lines: list[str], today: dt.date,
) -> NewNote | None:
    """The note to create for the broken `ref` in the note at `source`; None when it names no
    note that can be created inside the root (a path out of it, also through a symlinked folder;
    a file that is not a note)."""
    planned = _planned(links, catalogue, resolver, source, ref, title, sentence, lines, today)
    return planned if planned is not None and _inside_root(resolver.root, planned.path) else None


def _inside_root(root: Path, rel: str) -> bool:
    """The file at `rel` would be written inside the root's real folder (symlinks followed, the
    folders still to create included)."""
    try:
        real_root = Path(os.path.realpath(root))
        return Path(os.path.realpath(root / rel)).parent.is_relative_to(real_root)
    except (OSError, ValueError):
        return False


def _planned(
    links: NoteLinks, catalogue: Catalogue, resolver: LinkResolver, source: str, ref: LinkRef, title: str,
    sentence: str, lines: list[str], today: dt.date,
) -> NewNote | None:
    if ref.kind == LinkKind.PATH:
        rel = relative_target(source, ref.target)
        if rel is None or rel == "." or not ref.target:
            return None
        if not posixpath.splitext(rel)[1]:
            rel += ".md"
        if not rel.lower().endswith(NOTE_SUFFIXES):
            return None
        folder = posixpath.dirname(rel)
        siblings = _siblings(catalogue, resolver, folder)
        return NewNote(rel, title, _text(title, siblings, today))
    if not ref.target:
        return None
    if "/" in ref.target:
        rel = relative_target("", ref.target.lstrip("/"))
        if rel is None:
            return None
        folder = posixpath.dirname(rel)
        siblings = _siblings(catalogue, resolver, folder)
        return NewNote(_unique(resolver, folder, posixpath.basename(rel)), title, _text(title, siblings, today))
    folder = _folder(links, source, f"{link_words(ref)}. {sentence}", lines)
    siblings = _siblings(catalogue, resolver, folder)
    return NewNote(_unique(resolver, folder, _file_name(title, siblings)), title, _text(title, siblings, today))


def _folder(links: NoteLinks, source: str, context: str, lines: list[str]) -> str:
    query = LinkQuery(kind=LinkKind.WIKI, typed="", context=context, document=lines, limit=FOLDER_VOTERS)
    near = [
        (s.path, s.meaning) for s in links.suggest(source, query) if s.meaning is not None and s.meaning >= FOLDER_VOTE_FLOOR
    ]
    if not near:
        return posixpath.dirname(source)
    votes: dict[str, float] = {}
    for path, meaning in near:
        votes[posixpath.dirname(path)] = votes.get(posixpath.dirname(path), 0.0) + meaning
    return max(votes, key=lambda folder: votes[folder])


def _siblings(catalogue: Catalogue, resolver: LinkResolver, folder: str) -> list[_Sibling]:
    paths = [note.path for note in catalogue.notes if posixpath.dirname(note.path) == folder][:SIBLINGS]
    out = []
    for path in paths:
        lines = resolver.read_lines(path, SIBLING_BYTES)
        if lines is not None:
            out.append(_sibling(path, lines))
    return out


def _sibling(path: str, lines: list[str]) -> _Sibling:
    keys: list[tuple[str, str]] = []
    body = 0
    if lines and lines[0].rstrip() == "---":
        for number in range(1, len(lines)):
            if lines[number].rstrip() in ("---", "..."):
                body = number + 1
                break
            match = _KEY_VALUE.match(lines[number])
            if match:
                keys.append((match.group(1), match.group(2).strip()))
    first = next((line for line in lines[body:] if line.strip()), "")
    has_h1 = bool(ATX_HEADING.match(first)) and first.lstrip().startswith("# ")
    stem = posixpath.splitext(posixpath.basename(path))[0]
    return _Sibling(stem, tuple(keys), body > 0, has_h1)


def _file_name(title: str, siblings: list[_Sibling]) -> str:
    """`title` as this folder names its files: kebab-case where most of them are, else as written."""
    slugged = sum(1 for s in siblings if _SLUG_NAME.match(s.stem) and not s.stem.isdigit())
    if siblings and slugged * 2 > len(siblings):
        name = re.sub(r"[^\w]+", "-", title.lower()).strip("-")
    else:
        name = " ".join(_NOT_IN_FILE_NAME.sub(" ", title).split())
    return name.strip(". ") or "untitled"


def _unique(resolver: LinkResolver, folder: str, name: str) -> str:
    """`folder/name.md`, or with ` 2`, ` 3`... when a file of that name exists."""
    stem = name[: -len(".md")] if name.lower().endswith(".md") else name
    for number in range(1, 100):
        candidate = posixpath.join(folder, f"{stem}{'' if number == 1 else f' {number}'}.md")
        if not (resolver.root / candidate).exists():
            return candidate
    return posixpath.join(folder, f"{stem}.md")


def _text(title: str, siblings: list[_Sibling], today: dt.date) -> str:
    """Front matter of the keys most siblings have (in the first one's order) and an H1 where most have one."""
    with_front = [s for s in siblings if s.has_front_matter]
    lines: list[str] = []
    if siblings and len(with_front) * 2 > len(siblings):
        counts = Counter(key for s in with_front for key in dict(s.keys))
        order = list(dict.fromkeys(key for s in with_front for key, _ in s.keys))
        kept = [key for key in order if counts[key] * 2 > len(with_front)]
        lines = ["---", *(f"{key}: {_value(key, title, with_front, today)}".rstrip() for key in kept), "---"]
    has_h1 = not siblings or sum(s.has_h1 for s in siblings) * 2 > len(siblings)
    if has_h1 or not any(line.startswith("title:") for line in lines):
        lines.append(f"# {title}")
    return "\n".join([*lines, "", ""])


def _value(key: str, title: str, siblings: list[_Sibling], today: dt.date) -> str:
    lower = key.lower()
    if lower == "title":
        return json.dumps(title, ensure_ascii=False)  # a JSON string is a YAML string
    if lower in _DATE_KEYS:
        return today.isoformat()
    if lower in _LIST_KEYS:
        return "[]"
    if lower in _SHARED_KEYS:
        values = Counter(value for s in siblings for k, value in s.keys if k == key and value)
        if values:
            value, count = values.most_common(1)[0]
            if count * 2 > len(siblings):
                return value
    return ""
