"""The problems of a note's links: a link to no note, to a heading its note does not have, a wiki
name several notes answer to, a path that leaves the root.

Links are read as definition reads them (`kbls.links.syntax.links_in`: none in code) and
resolved by the same resolver (`LinkResolver`, against the root's `Catalogue`), so a link that
opens a note is never called broken. A wiki name is ambiguous when two or more notes answer to it
by the first kind of name that finds any (file name or path, then title, then alias): a file-name
match over another note's title is a clear winner, two files named alike are not.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from kbls.links.forms import name_key
from kbls.links.headings import heading_line, heading_line_in
from kbls.links.names import Catalogue, KeptProblem
from kbls.links.resolve import HeadingLines, LinkResolver, LinkTarget, relative_target
from kbls.links.syntax import LinkKind, LinkRef, links_in
from kbls.retrieval.notetexts import RequestResolver

#: links of one note checked (a generated note of 100k links gets its first ones checked).
MAX_CHECKED_LINKS = 2_000
#: the candidates an ambiguous link's message names.
MAX_NAMED_CANDIDATES = 5


class Problem(str, Enum):
    """What is wrong with a link; the values are the `diagnostics:` config keys."""

    MISSING_NOTE = "missing_note"
    MISSING_HEADING = "missing_heading"
    AMBIGUOUS = "ambiguous"
    OUTSIDE_ROOT = "outside_root"


@dataclass(frozen=True, slots=True)
class LinkProblem:
    ref: LinkRef
    problem: Problem
    message: str
    #: root-relative paths: an ambiguous name's notes (the one it opens first), a missing
    #: heading's note.
    notes: tuple[str, ...] = ()


class FolderResolver(RequestResolver):
    """The root's resolver for one check: each folder's real path is found once, and a note in it
    costs one `lstat` (a symlink is followed the full way), where `realpath` stats every folder
    of the path for every note (a 2,000-line note linking 1,700 notes spent most of its check there)."""

    def __init__(self, resolver: LinkResolver) -> None:
        super().__init__(resolver)
        self._folders: dict[str, str | None] = {}
        self._inside: dict[str, Path | None] = {}

    def inside(self, rel: str) -> Path | None:
        if rel not in self._inside:
            found = self._look(rel)
            self._inside[rel] = Path(found) if found is not None else None
        return self._inside[rel]

    def exists(self, rel: str) -> bool:
        return self._inside[rel] is not None if rel in self._inside else self._look(rel) is not None

    def _look(self, rel: str) -> str | None:
        folder, name = posixpath.split(rel)
        if folder not in self._folders:
            real = os.path.realpath(os.path.join(self._root_text, folder)) if folder else self._real_text
            root = self._real_text
            self._folders[folder] = real if real == root or real.startswith(root.rstrip(os.sep) + os.sep) else None
        real_folder = self._folders[folder]
        if real_folder is None or not name or name in (".", ".."):
            found = super().inside(rel)
            return str(found) if found is not None else None
        try:
            mode = os.lstat(os.path.join(real_folder, name)).st_mode
        except (OSError, ValueError):
            return None
        if stat.S_ISLNK(mode):
            found = super().inside(rel)
            return str(found) if found is not None else None
        return os.path.join(real_folder, name) if stat.S_ISREG(mode) else None


def check_links(
    catalogue: Catalogue, resolver: LinkResolver, source: str, lines: list[str], refs: Sequence[LinkRef] | None = None
) -> list[LinkProblem]:
    """The problems of `refs` (default: every link of `lines`, the text of the note at `source`)."""
    checked = links_in(lines)[:MAX_CHECKED_LINKS] if refs is None else refs
    resolver = FolderResolver(resolver)
    seen: HeadingLines = {}
    folder = posixpath.dirname(source)
    kept_problems = catalogue.link_problems
    out = []
    for ref in checked:
        # what a link to other notes says depends on its text and its note's folder only, so a
        # note opened for the first time finds the links its neighbours write resolved already
        key = (folder, ref.kind.value, ref.target, ref.heading)
        kept = kept_problems.get(key)
        if kept is not None and source not in kept.targets:
            found = kept.problem
            problem = LinkProblem(ref, Problem(found[0]), found[1], found[2]) if found is not None else None
        else:
            problem, targets = _problem(catalogue, resolver, source, lines, ref, seen)
            if targets is not None:
                said = (problem.problem.value, problem.message, problem.notes) if problem else None
                kept_problems[key] = KeptProblem(said, targets)
        if problem is not None:
            out.append(problem)
    return out


def _problem(
    catalogue: Catalogue, resolver: LinkResolver, source: str, lines: list[str], ref: LinkRef, seen: HeadingLines
) -> tuple[LinkProblem | None, frozenset[str] | None]:
    """The link's problem, and the notes it leads to when that answer lasts as long as the
    catalogue (None when it does not): it does for a link to other notes of the index or to no
    note by name, not for one into this note's own text nor for a path to a file or folder the
    index does not hold."""
    if ref.kind == LinkKind.PATH and ref.target:
        rel = relative_target(source, ref.target)
        if rel is None:
            return LinkProblem(ref, Problem.OUTSIDE_ROOT, f'"{ref.target}" leaves the workspace folder'), frozenset()
    targets = resolver.resolve(catalogue, source, ref, lines, seen)
    if not targets:
        lasting = ref.kind == LinkKind.WIKI and bool(ref.target)
        return _missing(resolver, source, ref), frozenset() if lasting else None
    paths = frozenset(t.path for t in targets)
    lasting = bool(ref.target) and source not in paths and all(path in catalogue.by_path for path in paths)
    return _found_problem(catalogue, resolver, source, lines, ref, targets, seen), paths if lasting else None


def _found_problem(
    catalogue: Catalogue, resolver: LinkResolver, source: str, lines: list[str], ref: LinkRef,
    targets: list[LinkTarget], seen: HeadingLines,
) -> LinkProblem | None:
    if ref.heading and _heading_missing(catalogue, resolver, source, lines, targets[0], ref.heading, seen):
        name = targets[0].title or targets[0].path
        where = "this note" if targets[0].path == source else f'"{name}"'
        return LinkProblem(ref, Problem.MISSING_HEADING, f'{where} has no heading "{ref.heading}"', (targets[0].path,))
    if ref.kind == LinkKind.WIKI and ref.target:
        answering = _answering(catalogue, ref.target, source)
        if len(answering) > 1:
            named = ", ".join(answering[:MAX_NAMED_CANDIDATES]) + (", …" if len(answering) > MAX_NAMED_CANDIDATES else "")
            return LinkProblem(
                ref, Problem.AMBIGUOUS,
                f'"{ref.target}" names {len(answering)} notes: {named} (it opens {targets[0].path})',
                (targets[0].path, *(p for p in answering if p != targets[0].path)),
            )
    return None


def _missing(resolver: LinkResolver, source: str, ref: LinkRef) -> LinkProblem | None:
    if ref.kind == LinkKind.WIKI:
        return LinkProblem(ref, Problem.MISSING_NOTE, f'No note named "{ref.target}"')
    rel = relative_target(source, ref.target) or ref.target
    if resolver.inside(rel) is not None:
        return None  # a file of the root that is not indexed (its headings are not known)
    if _folder_inside(resolver, rel):
        return None  # `[all projects](projects/)`: a folder of the root
    if os.path.lexists(resolver.root / rel):
        return LinkProblem(ref, Problem.OUTSIDE_ROOT, f'"{ref.target}" leads out of the workspace folder')
    return LinkProblem(ref, Problem.MISSING_NOTE, f'No note at "{rel}"')


def _folder_inside(resolver: LinkResolver, rel: str) -> bool:
    """`rel` is a folder inside the root's real folder (symlinks followed)."""
    try:
        real, real_root = Path(os.path.realpath(resolver.root / rel)), Path(os.path.realpath(resolver.root))
        return real.is_dir() and real.is_relative_to(real_root)
    except (OSError, ValueError):  # a NUL byte (`%00` in a link), a name too long for the system
        return False


def _heading_missing(
    catalogue: Catalogue, resolver: LinkResolver, source: str, lines: list[str], target: LinkTarget, heading: str,
    seen: HeadingLines,
) -> bool:
    """The resolver puts a heading it cannot find at line 0, where a note's own first heading
    may be too: look at the note's headings (as `resolve` read them) again to tell."""
    if target.line:
        return False
    kept = seen.get(target.path)
    if target.path == source or kept:
        text = lines if target.path == source else kept[1] if kept else []
        return bool(text) and heading_line(text, heading) is None
    found = resolver.headings_of(catalogue, target.path)
    return found is not None and heading_line_in(found, heading) is None


def _answering(catalogue: Catalogue, name: str, source: str) -> list[str]:
    """The notes of the first kind of name that `name` finds any by, in `Catalogue.named`'s order
    (kept in the catalogue per name and folder)."""
    memo = (name, posixpath.dirname(source))
    if memo not in catalogue.answering:
        catalogue.answering[memo] = _first_named(catalogue, name, source)
    return catalogue.answering[memo]


def _first_named(catalogue: Catalogue, name: str, source: str) -> list[str]:
    key = name_key(name)
    groups = (
        catalogue.by_folder_path.get(key, []) if "/" in key else catalogue.by_file_name.get(key, []),
        catalogue.by_title.get(key, []),
        catalogue.by_alias.get(key, []),
    )
    first = next((group for group in groups if group), [])
    paths = {note.path for note in first}
    if len(paths) < 2:
        return list(paths)
    return [note.path for note in catalogue.named(name, source) if note.path in paths]


def sentence_of(lines: list[str], ref: LinkRef) -> str:
    """The sentence around a link, as the words a reader sees (for ranking notes by meaning)."""
    line = lines[ref.line] if 0 <= ref.line < len(lines) else ""
    before, after = line[: ref.start], line[ref.end :]
    start = max(before.rfind(mark) for mark in (". ", "! ", "? ")) + 1
    ends = [at for mark in (". ", "! ", "? ") if (at := after.find(mark)) >= 0]
    end = min(ends) + 1 if ends else len(after)
    return " ".join(f"{before[start:]} {link_words(ref)} {after[:end]}".split())


def link_words(ref: LinkRef) -> str:
    """What a link names, as words: a wiki name, or a path's file stem with `-`/`_` as spaces."""
    if ref.kind == LinkKind.WIKI:
        return ref.target or ref.heading or ""
    stem = posixpath.splitext(posixpath.basename(ref.target))[0]
    return stem.replace("-", " ").replace("_", " ") or ref.heading or ""
