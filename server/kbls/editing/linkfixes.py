"""Fixes for a broken link: the notes it most likely meant ("did you mean", by title and by
meaning), each as the link rewritten to name it in the workspace's style, and the note it would
create (path and first text, shaped like the notes around it: `kbls.editing.newnote`).

"Did you mean" blends how alike the link's words and a note's names are (character trigrams, so
a typo or a reordered title still matches) with how near in meaning the note is to the link's
words and their sentence (the model's embedding, as `[[` completion ranks notes). Candidates are
the notes nearest by either signal; the best `FIXES` are offered.
"""

from __future__ import annotations

import posixpath
import re
import threading
import weakref
from dataclasses import dataclass

from kbls.editing.linkcheck import link_words
from kbls.links.forms import MARKDOWN_LINK, WIKI_LINK, name_key
from kbls.links.names import Catalogue, LinkStyle, Note, wiki_insert
from kbls.links.suggest import LinkQuery, NoteLinks
from kbls.links.syntax import LinkKind, LinkRef, heading_slug, link_label, markdown_path
from kbls.notepath import note_stem

#: notes offered for one broken link.
FIXES = 3
#: notes taken as candidates from each signal before blending.
CANDIDATES = 30
#: the blend of the two signals (both 0..1).
TITLE_WEIGHT = 0.5
MEANING_WEIGHT = 0.5
#: a candidate scoring less than this is not offered (alike in nothing).
MIN_SCORE = 0.15
#: did-you-mean answers kept per root (by link words and sentence, for one catalogue version).
SCORED_CACHE = 64
_SCORED: weakref.WeakKeyDictionary[NoteLinks, dict[tuple[object, ...], list[tuple[float, Note, float, float | None]]]] = (
    weakref.WeakKeyDictionary()
)
_SCORED_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class LinkRewrite:
    """A note a broken link may have meant, and the link's text rewritten to name it."""

    path: str
    title: str
    text: str
    score: float
    #: how alike the names are (trigram Dice, 0..1) and the meaning's cosine (None: not measured).
    title_match: float
    meaning: float | None


def trigrams(text: str) -> frozenset[str]:
    padded = f"  {name_key(text)} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def alike(a: frozenset[str], b: frozenset[str]) -> float:
    """Dice coefficient of two trigram sets."""
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def _names(note: Note) -> list[str]:
    return [note.title, *note.aliases, note_stem(note.path).replace("-", " ").replace("_", " ")]


def did_you_mean(
    links: NoteLinks, catalogue: Catalogue, source: str, ref: LinkRef, sentence: str, lines: list[str]
) -> list[LinkRewrite]:
    """The `FIXES` notes the broken `ref` most likely meant, best first; never the note itself.
    Scored once per link, sentence and catalogue version: an editor asks again on every cursor
    move over the link (a scan of every note's names and an embedding each time otherwise)."""
    words = link_words(ref)
    key = (catalogue.version, source, words, sentence)
    with _SCORED_LOCK:  # code actions are answered on a pool of threads
        scored = _SCORED.setdefault(links, {}).get(key)
    if scored is None:
        scored = _scored(links, catalogue, source, words, sentence, lines)
        with _SCORED_LOCK:
            cache = _SCORED.setdefault(links, {})
            if len(cache) >= SCORED_CACHE:
                cache.pop(next(iter(cache)))
            cache[key] = scored
    style = links.style(catalogue, lines)
    return [
        LinkRewrite(
            note.path, note.title, rewrite(catalogue, style, source, ref, lines, note), round(score, 4), title, meaning
        )
        for score, note, title, meaning in scored
    ]


def _scored(
    links: NoteLinks, catalogue: Catalogue, source: str, words: str, sentence: str, lines: list[str]
) -> list[tuple[float, Note, float, float | None]]:
    """The best `FIXES` notes for the link's words: (score, note, title match, meaning)."""
    wanted = trigrams(words)
    by_title = sorted(
        ((max(alike(wanted, trigrams(name)) for name in _names(note)), note) for note in catalogue.notes),
        key=lambda pair: -pair[0],
    )[:CANDIDATES]
    query = LinkQuery(kind=LinkKind.WIKI, typed="", context=f"{words}. {sentence}", document=lines, limit=CANDIDATES)
    meaning = {s.path: s.meaning for s in links.suggest(source, query) if s.meaning is not None}
    titles = {note.path: score for score, note in by_title}
    scored: list[tuple[float, Note]] = []
    for path in dict.fromkeys([*titles, *meaning]):
        note = catalogue.by_path.get(path)
        if note is None or path == source:
            continue
        title = titles.get(path)
        if title is None:
            title = max(alike(wanted, trigrams(name)) for name in _names(note))
        score = TITLE_WEIGHT * title + MEANING_WEIGHT * max(meaning.get(path) or 0.0, 0.0)
        if score >= MIN_SCORE:
            scored.append((score, note))
    scored.sort(key=lambda pair: (-pair[0], pair[1].path))
    return [
        (score, note, round(titles.get(note.path, 0.0), 4), round(meaning[note.path], 4) if note.path in meaning else None)
        for score, note in scored[:FIXES]
    ]


def rewrite(catalogue: Catalogue, style: LinkStyle, source: str, ref: LinkRef, lines: list[str], note: Note) -> str:
    """The text of `ref` naming `note` instead: a wiki link in the workspace's style (its heading
    and a label a person wrote kept), a markdown link with the path relative to the note (its
    label, `#heading` and `<…>` form kept)."""
    written = lines[ref.line][ref.start : ref.end]
    if ref.kind == LinkKind.WIKI:
        match = WIKI_LINK.fullmatch(written)
        insert = wiki_insert(catalogue, note, style)[:-2]
        name, _, label = insert.partition("|")
        heading = f"#{match.group(2)}" if match and match.group(2) is not None else ""
        if match and match.group(3) is not None:
            label = match.group(3)
        elif heading and label:
            label = ""  # `[[name#heading]]` reads as the heading: a title label would hide it
        return f"[[{name}{heading}{'|' + label if label else ''}]]"
    match = MARKDOWN_LINK.fullmatch(written)
    if match is None:
        return written
    angled = match.group(2) is not None
    group = 2 if angled else 3
    fragment = f"#{ref.heading}" if ref.heading else ""
    path = markdown_path(source, note.path, angled) + fragment
    return written[: match.start(group)] + path + written[match.end(group) :]


def heading_fixes(ref: LinkRef, lines: list[str], headings: list[str], title: str) -> list[tuple[str, str]]:
    """(heading, rewritten link) for the `FIXES` headings of the target most alike the missing one
    (in the note's order where none is alike); not its title's H1, which a link to the note reaches."""
    wanted = trigrams(ref.heading or "")
    kept = [h for h in dict.fromkeys(headings) if h != title]
    scored = sorted(((alike(wanted, trigrams(h)), order, h) for order, h in enumerate(kept)), key=lambda t: (-t[0], t[1]))
    written = lines[ref.line][ref.start : ref.end]
    out = []
    for _, _, heading in scored[:FIXES]:
        if ref.heading is None:
            continue
        anchor = heading if ref.kind == LinkKind.WIKI else heading_slug(heading)
        at = written.rfind("#" + ref.heading) if ref.kind == LinkKind.WIKI else written.rfind("#")
        if at < 0:
            continue
        end = at + 1 + len(ref.heading) if ref.kind == LinkKind.WIKI else _fragment_end(written, at)
        out.append((heading, written[: at + 1] + anchor + written[end:]))
    return out


_FRAGMENT_END = re.compile(r"[\s)>\"']")


def _fragment_end(written: str, at: int) -> int:
    found = _FRAGMENT_END.search(written, at + 1)
    return found.start() if found else len(written)


def label_of(ref: LinkRef, lines: list[str]) -> str:
    """The title a new note for `ref` gets: the wiki name's last part, or the markdown label."""
    if ref.kind == LinkKind.WIKI:
        return link_label(posixpath.basename(ref.target)) or ref.target
    match = MARKDOWN_LINK.fullmatch(lines[ref.line][ref.start : ref.end])
    label = link_label(match.group(1)) if match else ""
    return label or note_stem(ref.target)
