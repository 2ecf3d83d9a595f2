"""Link completion and link resolution for one root (`Engine.links`).

Completion ranks notes for the link being typed by a blend of how well a name (title, alias,
file name, path) starts with what was typed and how near the note's best section is, by
meaning, to the paragraph around the cursor: with nothing typed, meaning alone (a paragraph
about a topic finds its note though no word is shared); once something is typed, only notes a
name of which starts with it (or has a word that does) stay. Each suggestion carries the text
to insert in the workspace's link style (`kbls.retrieval.links`), a breadcrumb and a snippet.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kbls.indexing.embed import Embedder
from kbls.query.filters import Filters
from kbls.retrieval.links import (
    STYLE_SAMPLE_BYTES,
    STYLE_SAMPLE_FILES,
    Catalogue,
    LinkResolver,
    LinkStyle,
    LinkTarget,
    Note,
    detect_style,
    markdown_path,
    wiki_insert,
)
from kbls.retrieval.linksyntax import LinkKind, LinkRef
from kbls.retrieval.snippet import make_snippet
from kbls.retrieval.vectors import VectorIndex
from kbls.storage.store import Store

#: suggestions per completion request.
SUGGESTIONS = 30
#: nearest chunks read to find the notes nearest in meaning.
MEANING_CANDIDATES = 200
#: the blend: a name that starts with what was typed, and nearness in meaning (cosine).
NAME_WEIGHT = 0.5
MEANING_WEIGHT = 0.5
#: a name with a later word starting with what was typed counts this much of a full prefix.
WORD_MATCH = 0.7
#: the workspace's link style is learned again after this many seconds.
STYLE_TTL_S = 30.0

_WORD_START = re.compile(r"(?<=[\s\-_/.])\w")


@dataclass(frozen=True, slots=True)
class LinkQuery:
    """A link being typed in the note at `source`: what was typed and the text around it."""

    kind: LinkKind
    typed: str
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


def name_match(typed: str, note: Note) -> tuple[float, str | None]:
    """(1.0, name) when a name starts with `typed`, (WORD_MATCH, name) when a word in it does."""
    wanted = typed.lower().strip().lstrip("./")
    if not wanted:
        return 0.0, None
    names = [("title", note.title), *(("alias", a) for a in note.aliases),
             ("file name", note.path.rsplit("/", 1)[-1]), ("path", note.path)]
    for which, name in names:
        if name.lower().startswith(wanted):
            return 1.0, which
    for which, name in names:
        lowered = name.lower()
        if any(lowered.startswith(wanted, m.start()) for m in _WORD_START.finditer(lowered)):
            return WORD_MATCH, which
    return 0.0, None


class NoteLinks:
    """The catalogue of one root's notes (reloaded on change) and its link style (cached)."""

    def __init__(
        self, root: Path, store: Store, vectors: VectorIndex, embedder: Embedder, semantic_ready: Callable[[], bool]
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.embedder = embedder
        self.semantic_ready = semantic_ready
        self.resolver = LinkResolver(root)
        # Guards the two caches below; they are replaced whole, read without copying.
        self._lock = threading.Lock()
        self._catalogue: tuple[tuple[int, int, float], Catalogue] | None = None
        self._samples: tuple[float, list[list[str]]] | None = None

    def catalogue(self) -> Catalogue:
        version = self.store.notes_version()
        with self._lock:
            cached = self._catalogue
        if cached is not None and cached[0] == version:
            return cached[1]
        made = Catalogue.of(self.store.note_names())
        with self._lock:
            self._catalogue = (version, made)
        return made

    def _workspace_samples(self) -> list[list[str]]:
        """Lines of a sample of the notes holding wiki links (read again every STYLE_TTL_S)."""
        now = time.monotonic()
        with self._lock:
            cached = self._samples
        if cached is not None and now - cached[0] < STYLE_TTL_S:
            return cached[1]
        samples = [
            lines for rel in self.store.files_linking("wiki", STYLE_SAMPLE_FILES)
            if (lines := self.resolver.read_lines(rel, STYLE_SAMPLE_BYTES)) is not None
        ]
        with self._lock:
            self._samples = (now, samples)
        return samples

    def style(self, catalogue: Catalogue, document: list[str]) -> LinkStyle:
        return detect_style(catalogue, [*self._workspace_samples(), document])

    # -- resolution -----------------------------------------------------------------------------
    def resolve(self, source: str, refs: list[LinkRef], source_lines: list[str]) -> list[list[LinkTarget]]:
        """Where each link of the note at `source` leads, best first ([] where nowhere)."""
        catalogue = self.catalogue()
        return [self.resolver.resolve(catalogue, source, ref, source_lines) for ref in refs]

    # -- completion -----------------------------------------------------------------------------
    def suggest(self, source: str, query: LinkQuery) -> list[LinkSuggestion]:
        """Notes for the link being typed in the note at `source`, best first; never itself."""
        catalogue = self.catalogue()
        meaning = self._meaning(query.context) if query.context.strip() else {}
        scored: list[tuple[float, Note, str | None]] = []
        for note in catalogue.notes:
            if note.path == source:
                continue
            match, which = name_match(query.typed, note)
            near = meaning.get(note.id)
            if query.typed.strip():
                if match == 0.0:
                    continue
                score = NAME_WEIGHT * match + MEANING_WEIGHT * max(near[0] if near else 0.0, 0.0)
            elif meaning:
                if near is None:
                    continue
                score = near[0]
            else:
                score = 0.0
            scored.append((score, note, which))
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
                markdown_path(source, note.path) + ")"
            )
            out.append(LinkSuggestion(
                path=note.path, title=note.title, insert=insert, label=note.title,
                breadcrumb=row.breadcrumb if row else note.title, snippet=make_snippet(row.body, []) if row else "",
                line=row.start_line if row else 0, score=round(score, 6), matched=which,
                meaning=round(meaning[note.id][0], 4) if note.id in meaning else None,
            ))
        return out

    def _meaning(self, context: str) -> dict[int, tuple[float, int]]:
        """file id -> (cosine of its nearest chunk to `context`, that chunk's rowid), for the
        notes among the nearest chunks; {} while the model is not loaded."""
        if not self.semantic_ready():
            return {}
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

