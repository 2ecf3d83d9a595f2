"""Link completion and link resolution for one root (`Engine.links`).

Completion ranks notes for the link being typed by a blend of how well a name (title, alias,
file name, path) starts with what was typed and how near the note's best section is, by
meaning, to the paragraph around the cursor: with nothing typed, meaning alone (a paragraph
about a topic finds its note though no word is shared), or every note by title when none is
near (a note below `MEANING_FLOOR` is not near: it is not offered for its meaning, and its
meaning adds nothing to a name's match); once something is typed, only notes a name of which
starts with it (or has a word that does) stay. Each suggestion carries the text
to insert in the workspace's link style (`kbls.links.names`), a breadcrumb and a snippet.
"""

from __future__ import annotations

import gc
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kbls.daemon.watch import own_watch_enabled
from kbls.indexing.embed import Embedder
from kbls.links.names import (
    STYLE_SAMPLE_BYTES,
    STYLE_SAMPLE_FILES,
    Catalogue,
    LinkStyle,
    Note,
    StyleCounts,
    count_styles,
    wiki_insert,
)
from kbls.links.resolve import HeadingLines, LinkResolver, LinkTarget
from kbls.links.syntax import LinkKind, LinkRef, TypedLink, link_label, markdown_path
from kbls.query.filters import Filters
from kbls.retrieval.related import RELATED_MIN_SIMILARITY
from kbls.retrieval.snippet import make_snippet
from kbls.storage.roles import Backend, VectorSearch

#: suggestions per completion request.
SUGGESTIONS = 30
#: nearest chunks read to find the notes nearest in meaning.
MEANING_CANDIDATES = 200
#: the blend: a name that starts with what was typed, and nearness in meaning (cosine).
NAME_WEIGHT = 0.5
MEANING_WEIGHT = 0.5
#: a note whose nearest section is less similar than this to the paragraph is not near in
#: meaning: it is neither offered nor ranked for it (the related notes' floor, one scale).
MEANING_FLOOR = RELATED_MIN_SIMILARITY
#: the workspace's link style is learned again after this many seconds.
STYLE_TTL_S = 30.0
#: paragraphs whose nearest notes are kept: typing after `[[` leaves the paragraph unchanged,
#: so each keystroke's request reuses them (one entry per open editor is plenty).
MEANING_CACHE_SIZE = 8
#: with the daemon's own file watcher off (`KBLS_NO_WATCH=1`) a note changed or deleted outside
#: the editor is not indexed again, so what the resolver read from the disk (which files exist,
#: their headings) is read again after this many seconds instead of lasting as the catalogue does.
DISK_FACTS_TTL_S = 30.0

@dataclass(frozen=True, slots=True)
class LinkQuery(TypedLink):
    """A link being typed in the note at `source`: what was typed and the text around it."""

    context: str
    #: the lines of the note being edited (its links count toward the workspace's style).
    document: list[str]
    limit: int = SUGGESTIONS


@dataclass(frozen=True, slots=True)
class LinkSuggestion:
    path: str
    title: str
    #: replaces what was typed (and a closing `]]` or `)` after it): `Title]]`, `a/b.md)`.
    insert: str
    #: for an empty markdown label (`[](`): the note's title.
    label: str
    breadcrumb: str
    snippet: str
    #: the 0-based line of the section shown (the nearest by meaning, else the note's first).
    line: int
    score: float
    #: which name matched what was typed ("title", "alias", "file name", "path"), if any.
    matched: str | None
    #: cosine similarity of the note's nearest section to the context; None when not measured.
    meaning: float | None


@dataclass(frozen=True, slots=True)
class Suggestions:
    """Link suggestions of one root, with its folder as the client named it (for URIs)."""

    folder: Path
    items: list[LinkSuggestion]


@dataclass(frozen=True, slots=True)
class Resolved:
    """Where each link of a note leads (root-relative), with the root's folder as named."""

    folder: Path
    targets: list[list[LinkTarget]]


class NoteLinks:
    """The catalogue of one root's notes (reloaded on change) and its link style (cached)."""

    def __init__(
        self, root: Path, store: Backend, vectors: VectorSearch, embedder: Embedder, semantic_ready: Callable[[], bool]
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.embedder = embedder
        self.semantic_ready = semantic_ready
        self.resolver = LinkResolver(root)
        # Guards the two caches below; they are replaced whole, read without copying.
        self._lock = threading.Lock()
        self._catalogue: Catalogue | None = None
        #: the store's `lexical_generation` when the catalogue was last found current.
        self._generation: int | None = None
        self._styles: tuple[float, StyleCounts] | None = None
        self._meanings: OrderedDict[tuple[str, tuple[int, int, float]], dict[int, tuple[float, int]]] = OrderedDict()

    def catalogue(self) -> Catalogue:
        # `lexical_generation` moves with every commit to the store and costs a pragma, where
        # `notes_version` scans the files table (~1-10 ms at 10,000 notes, once per request)
        generation = self.store.lexical_generation()
        with self._lock:
            cached, seen = self._catalogue, self._generation
        if cached is None or generation is None or generation != seen:
            version = self.store.notes_version()
            if cached is None or cached.version != version:
                cached = Catalogue.of(self.store.note_names(), version)
                _freeze_long_lived()
            with self._lock:
                self._catalogue, self._generation = cached, generation
        if not own_watch_enabled() and time.monotonic() - cached.learnt_since > DISK_FACTS_TTL_S:
            cached.forget_learnt()  # nothing tells the index of a change on the disk
        return cached

    def _workspace_styles(self, catalogue: Catalogue) -> StyleCounts:
        """The link forms of a sample of the notes holding wiki links (counted every STYLE_TTL_S)."""
        now = time.monotonic()
        with self._lock:
            cached = self._styles
        if cached is not None and now - cached[0] < STYLE_TTL_S:
            return cached[1]
        samples = [
            lines for rel in self.store.files_linking("wiki", STYLE_SAMPLE_FILES)
            if (lines := self.resolver.read_lines(rel, STYLE_SAMPLE_BYTES)) is not None
        ]
        counts = count_styles(catalogue, samples)
        with self._lock:
            self._styles = (now, counts)
        return counts

    def style(self, catalogue: Catalogue, document: list[str]) -> LinkStyle:
        """The workspace's wiki style, the note being edited counted with its sample."""
        return (self._workspace_styles(catalogue) + count_styles(catalogue, [document])).style()

    # -- resolution -----------------------------------------------------------------------------
    def resolve(self, source: str, refs: list[LinkRef], source_lines: list[str]) -> list[list[LinkTarget]]:
        """Where each link of the note at `source` leads, best first ([] where nowhere)."""
        catalogue = self.catalogue()
        seen: HeadingLines = {}
        return [self.resolver.resolve(catalogue, source, ref, source_lines, seen) for ref in refs]

    # -- completion -----------------------------------------------------------------------------
    def suggest(self, source: str, query: LinkQuery) -> list[LinkSuggestion]:
        """Notes for the link being typed in the note at `source`, best first; never itself."""
        catalogue = self.catalogue()
        nearest = self._meaning(query.context, catalogue.version) if query.context.strip() else {}
        meaning = {file_id: near for file_id, near in nearest.items() if near[0] >= MEANING_FLOOR}
        scored: list[tuple[float, Note, str | None]] = []
        if query.typed.strip():
            for path, (match, kind) in catalogue.name_matches(query.typed).items():
                note = catalogue.by_path[path]
                near = meaning.get(note.id)
                scored.append((NAME_WEIGHT * match + MEANING_WEIGHT * (near[0] if near else 0.0), note, kind))
        elif meaning:
            by_id = {note.id: note for note in catalogue.notes}
            scored = [(near, by_id[file_id], None) for file_id, (near, _) in meaning.items() if file_id in by_id]
        else:
            scored = [(0.0, note, None) for note in catalogue.notes]
        scored = [s for s in scored if s[1].path != source]
        scored.sort(key=lambda s: (-s[0], s[1].title.lower(), s[1].path))
        chosen = scored[: query.limit]
        style = self.style(catalogue, query.document) if query.kind == LinkKind.WIKI else LinkStyle()
        firsts = self.store.first_chunk_of_files(n.id for _, n, _ in chosen if n.id not in meaning)
        rowids = [meaning[n.id][1] if n.id in meaning else firsts.get(n.id, 0) for _, n, _ in chosen]
        rows = self.store.chunk_rows([r for r in rowids if r])
        out = []
        for (score, note, which), rowid in zip(chosen, rowids, strict=True):
            row = rows.get(rowid)
            insert = wiki_insert(catalogue, note, style) if query.kind == LinkKind.WIKI else (
                markdown_path(source, note.path, query.angled) + (">)" if query.angled else ")")
            )
            out.append(LinkSuggestion(
                path=note.path, title=note.title, insert=insert, label=link_label(note.title),
                breadcrumb=row.breadcrumb if row else note.title, snippet=make_snippet(row.body, []) if row else "",
                line=row.start_line if row else 0, score=round(score, 6), matched=which,
                meaning=round(meaning[note.id][0], 4) if note.id in meaning else None,
            ))
        return out

    def _meaning(self, context: str, version: tuple[int, int, float]) -> dict[int, tuple[float, int]]:
        """file id -> (cosine of its nearest chunk to `context`, that chunk's rowid), for the
        notes among the nearest chunks; {} while the model is not loaded. Kept per paragraph
        while the notes (`version`) do not change."""
        if not self.semantic_ready():
            return {}
        key = (context, version)
        with self._lock:
            known = self._meanings.get(key)
            if known is not None:
                self._meanings.move_to_end(key)
                return known
        found = self._nearest_notes(context)
        with self._lock:
            self._meanings[key] = found
            while len(self._meanings) > MEANING_CACHE_SIZE:
                self._meanings.popitem(last=False)
        return found

    def _nearest_notes(self, context: str) -> dict[int, tuple[float, int]]:
        query = self.embedder.embed_query(context)
        nearest = self.vectors.top(query, MEANING_CANDIDATES)
        if not nearest:
            return {}
        score_of = dict(nearest)
        pairs = self.store.chunks_for_embeddings([e for e, _ in nearest], Filters())
        files = self.store.chunk_files([rowid for _, rowid in pairs])
        best: dict[int, tuple[float, int]] = {}
        for embedding_id, rowid in pairs:
            file_id = files.get(rowid)
            if file_id is None:
                continue
            score = float(score_of[embedding_id])
            if file_id not in best or score > best[file_id][0]:
                best[file_id] = (score, rowid)
        return best


def _freeze_long_lived() -> None:
    """Take the objects alive now (the catalogue just made, the modules, the engine's caches) out
    of the collector's full passes: a catalogue of 10,000 notes holds ~60,000 of them, and each
    full pass over 170,000 objects took 100-350 ms, in the middle of whichever request it fell
    on. They are still freed when no longer referenced (a catalogue holds no cycles); the young
    generation is collected first so that little cyclic garbage is frozen with them."""
    gc.collect(1)
    gc.freeze()
