"""Hybrid search: semantic and lexical candidates, each scored by both signals, fused into a
0..1 confidence (`retrieval.fusion`), cut at a relevance floor, then turned into hits.

Every candidate either ranking finds gets both signals measured exactly (its cosine from the
in-memory vectors, its coverage from its text), so a chunk the lexical ranking found is not
treated as semantically unrelated just because it missed the semantic top N. A chunk still
waiting for its vector (a first index embeds after writing every note) is scored by its words
alone (its lexical confidence, on the same 0..1 scale) and goes through the same floor: a note
holding the query's words is found from the start, an off-topic query still answers nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import msgspec
import numpy as np

from kbls.config import SearchConfig
from kbls.indexing.embed import Embedder
from kbls.limits import Mode
from kbls.query.filters import Filters
from kbls.query.syntax import ParsedQuery
from kbls.results import Explain, Hit, Section, Signals
from kbls.retrieval.fusion import Weights, fused_note_score, lexical_confidence, semantic_confidence
from kbls.retrieval.lexical import LexicalRanker
from kbls.retrieval.rerank import Reranker
from kbls.retrieval.snippet import Term, make_snippet, snippet_terms
from kbls.storage.records import ChunkRow
from kbls.storage.roles import Backend, VectorSearch

#: how many candidates each ranking contributes, per requested hit.
CANDIDATES_PER_HIT = 5
MIN_CANDIDATES = 50
#: hits of an answer whose best hit passed the floor are kept down to this share of the floor.
TAIL_SHARE = 0.5
#: with group_by_file: the other sections of a note listed with its hit (`Hit.sections`), so a
#: picker can expand a note in place; `Hit.more` counts them all.
MAX_SECTIONS = 10


@dataclass(slots=True)
class Scored:
    """One candidate chunk with its calibrated signals (0..1) and fused score. Never changed
    once made (a new one is made instead), but not frozen: a frozen dataclass sets each field
    through `object.__setattr__`, and a search makes about 135 (0.04 ms instead of 0.12)."""

    row: ChunkRow
    semantic: float
    lexical: float
    score: float
    signals: Signals
    #: the raw cosine similarity (0 where not measured): orders equal scores, as the semantic
    #: signal is clipped at 1 and every close paraphrase (cosine >= 0.70) would otherwise tie.
    cosine: float = 0.0
    #: what the lexical signal was made of (for `explain`): coverage, BM25 share of the best.
    coverage: float | None = None
    bm25_share: float | None = None
    #: no vector yet (the lexical first pass wrote it): scored by its words alone
    waiting: bool = False

    def order(self) -> tuple[float, float, int]:
        """Sort key, best first: the score, then the closer meaning, then the chunk's rowid."""
        return (-self.score, -self.cosine, self.row.id)


class HybridSearcher:
    """Searches one root's store; the engine validates the request and picks the mode."""

    def __init__(
        self, root: Path, store: Backend, vectors: VectorSearch, embedder: Embedder, config: SearchConfig,
        reranker: Reranker | None = None,
    ) -> None:
        self.root = root
        self.store = store
        self.vectors = vectors
        self.embedder = embedder
        self.config = config
        self.weights = Weights.of(config.semantic_weight, config.lexical_weight)
        self.lexical = LexicalRanker(store)
        self.reranker = reranker if reranker is not None else Reranker(config.rerank, embedder.config.threads)

    def search(
        self, parsed: ParsedQuery, limit: int, mode: Mode, group_by_file: bool, explain: bool = False,
        section_snippets: bool = False,
    ) -> list[Hit]:
        """Hits best first; grouped by file, each note's other sections carry their snippet only
        with `section_snippets` (a picker shows them when a note is expanded, and asks then: a
        lexical answer lists many sections per note, and their snippets cost more than the
        search)."""
        if not parsed.text.strip():
            if parsed.filters.empty:
                return []
            # Only filters (`tag:rust`): list the matching notes, by path.
            rowids = self.store.first_chunks_matching(parsed.filters, limit)
            rows = self.store.chunk_rows(rowids)
            listed = [Scored(rows[r], 0.0, 0.0, 0.0, Signals()) for r in rowids if r in rows]
            return [self._hit(s, s.score, 0, [], None) for s in listed]
        wanted = max(limit * CANDIDATES_PER_HIT * (3 if group_by_file else 1), MIN_CANDIDATES)
        scored, weights = self._score(parsed.text, parsed.filters, mode, wanted)
        kept = self._above_floor(scored, mode, scoped=not parsed.filters.empty)
        reranked = self.reranker.enabled and bool(kept)
        if reranked:
            kept = self._rerank(parsed.text, kept)
        terms = snippet_terms(parsed.text)
        shown = weights if explain and not reranked else None
        if not group_by_file:
            return [self._hit(s, s.score, 0, terms, self._explain(s, mode, shown)) for s in kept[:limit]]
        section_terms = terms if section_snippets else None
        return self._by_file(kept, mode if not reranked else None, limit, terms, section_terms, weights, shown)

    def _rerank(self, text: str, kept: list[Scored]) -> list[Scored]:
        """The cross-encoder's order and score for the best candidates; the rest follow them."""
        top = kept[: self.reranker.config.candidates]
        relevance = self.reranker.scores(text, [f"{s.row.breadcrumb}\n\n{s.row.body}" for s in top])
        rescored = [
            Scored(s.row, s.semantic, s.lexical, r, s.signals, s.cosine) for s, r in zip(top, relevance, strict=True)
        ]
        rescored.sort(key=Scored.order)
        floor = min((s.score for s in rescored), default=0.0)
        rest = [Scored(s.row, s.semantic, s.lexical, min(s.score, floor), s.signals, s.cosine) for s in kept[len(top):]]
        return rescored + rest

    def _above_floor(self, scored: list[Scored], mode: Mode, scoped: bool) -> list[Scored]:
        """The relevance floor. A query whose best candidate is below `min_score` is about
        something the notes do not hold: no hits. Otherwise hits down to half of it are kept, so
        the second-best note of a good answer is not lost to a hard cut. Lexical mode, a literal
        word search, keeps every chunk that holds a content word of the query; so does a `scoped`
        query (one with filters: `path:travel/** trains and buses`), where the user has said
        where to look and a note there holding one of the words is evidence enough. A chunk
        waiting for its vector is held to the same floor by its lexical confidence."""
        if mode == Mode.LEXICAL:
            return [s for s in scored if s.score > 0.0]
        floor = self.config.min_score
        relevant = bool(scored) and scored[0].score >= floor
        return [
            s for s in scored
            if s.score > 0.0 and ((relevant and s.score >= floor * TAIL_SHARE) or (scoped and s.lexical > 0.0))
        ]

    def _score(self, text: str, filters: Filters, mode: Mode, wanted: int) -> tuple[list[Scored], Weights]:
        """Candidates of the mode's rankings with both signals, best first, and the weights
        they were fused by for this query."""
        query: np.ndarray | None = None
        semantic: list[tuple[int, float]] = []
        lexical: list[tuple[int, float]] = []
        if mode in (Mode.HYBRID, Mode.SEMANTIC):
            query = self.embedder.embed_query(text)
            semantic = self._semantic(query, wanted, filters)
        words = self.lexical.words(text) if mode != Mode.SEMANTIC else None
        if words is not None:
            lexical = self.lexical.rank(words, filters, wanted)
        sem_rank = {rowid: i + 1 for i, (rowid, _) in enumerate(semantic)}
        lex_rank = {rowid: i + 1 for i, (rowid, _) in enumerate(lexical)}
        rows = self.lexical.chunk_rows(list(dict.fromkeys([r for r, _ in semantic] + [r for r, _ in lexical])))
        cosine = dict(semantic)
        if query is not None:
            missing = [row.embedding_id for rowid, row in rows.items() if rowid not in cosine]
            by_embedding = self.vectors.similarities(query, missing)
            for rowid, row in rows.items():
                if rowid not in cosine and row.embedding_id in by_embedding:
                    cosine[rowid] = by_embedding[row.embedding_id]
        bm25 = dict(lexical)
        best_bm25 = max(bm25.values(), default=0.0)
        coverage = words.chunk_coverages(rows[r] for r in bm25 if r in rows) if words is not None else {}
        signals: list[tuple[int, ChunkRow, float, float]] = []
        for rowid, row in rows.items():
            sem = semantic_confidence(cosine[rowid]) if rowid in cosine else 0.0
            lex = 0.0
            if words is not None and rowid in bm25:
                lex = lexical_confidence(coverage[rowid], bm25[rowid], best_bm25)
            signals.append((rowid, row, sem, lex))
        weights = self.weights
        out = []
        for rowid, row, sem, lex in signals:
            waiting = mode == Mode.HYBRID and rowid not in cosine
            score = sem if mode == Mode.SEMANTIC else lex if mode == Mode.LEXICAL or waiting else weights.fuse(sem, lex)
            share = bm25[rowid] / best_bm25 if rowid in bm25 and best_bm25 > 0 else None
            out.append(Scored(
                row, sem, lex, score, Signals(sem_rank.get(rowid), lex_rank.get(rowid)), cosine.get(rowid, 0.0),
                coverage.get(rowid), share, waiting,
            ))
        out.sort(key=Scored.order)
        return out, weights

    def _semantic(self, vector: np.ndarray, wanted: int, filters: Filters) -> list[tuple[int, float]]:
        allowed = None if filters.empty else self.store.allowed_embeddings(filters)
        if allowed is not None and not len(allowed):
            return []
        nearest = self.vectors.top(vector, wanted, allowed)
        score_of = dict(nearest)
        pairs = self.store.chunks_for_embeddings([e for e, _ in nearest], filters)
        ranked = sorted(((rowid, score_of[e]) for e, rowid in pairs), key=lambda p: (-p[1], p[0]))
        return ranked[:wanted]

    def _by_file(
        self, kept: list[Scored], mode: Mode | None, limit: int, terms: list[Term],
        section_terms: list[Term] | None, weights: Weights, shown: Weights | None,
    ) -> list[Hit]:
        """One hit per note: its best chunk shown, its other matching chunks as its `sections`,
        scored by `note_score`. Equal scores go to the note closer in meaning (its best cosine)."""
        notes: dict[str, list[Scored]] = {}
        for s in kept:  # best first
            notes.setdefault(s.row.path, []).append(s)
        score = {path: self.note_score(sections, mode, weights) for path, sections in notes.items()}
        closest = {path: max(s.cosine for s in sections) for path, sections in notes.items()}
        order = sorted(notes, key=lambda p: (-score[p], -closest[p], notes[p][0].row.id))[:limit]
        return [
            self._note_hit(notes[p], score[p], terms, section_terms, self._note_explain(notes[p], score[p], mode, shown))
            for p in order
        ]

    def note_score(self, sections: list[Scored], mode: Mode | None, weights: Weights | None = None) -> float:
        """A note's score from its matching `sections` (best first), the one place it is made:
        its best section's (in hybrid mode the note's best value of each signal fused: its title
        may match the words, another section the meaning) plus a share of its next-best section
        (`fusion.fused_note_score`); with a reranker's order (mode None), its best section's score."""
        if mode == Mode.HYBRID and all(s.waiting for s in sections):
            best = max(s.lexical for s in sections)
        elif mode == Mode.HYBRID:
            fuse = (weights or self.weights).fuse
            best = fuse(max(s.semantic for s in sections), max(s.lexical for s in sections))
        else:
            best = sections[0].score
        if mode is None:
            return best
        return fused_note_score(best, sections[1].score if len(sections) > 1 else 0.0)

    def _note_hit(
        self, sections: list[Scored], score: float, terms: list[Term], section_terms: list[Term] | None,
        explain: Explain | None,
    ) -> Hit:
        """The note's hit at its best section; its other sections' snippets ("" without
        `section_terms`: not asked for)."""
        hit = self._hit(sections[0], score, len(sections) - 1, terms, explain)
        hit.sections = [
            Section(
                start_line=s.row.start_line, end_line=s.row.end_line, breadcrumb=s.row.breadcrumb,
                snippet="" if section_terms is None else make_snippet(s.row.body, section_terms),
                score=round(float(s.score), 4),
            )
            for s in sections[1 : 1 + MAX_SECTIONS]
        ]
        return hit

    def _note_explain(
        self, sections: list[Scored], score: float, mode: Mode | None, weights: Weights | None
    ) -> Explain | None:
        """`_explain` of a note: its signals as `note_score` took them, and what its other
        sections added."""
        explained = self._explain(sections[0], mode, weights)
        if explained is None:
            return None
        if mode == Mode.HYBRID:
            explained = msgspec.structs.replace(
                explained, semantic=round(max(s.semantic for s in sections), 4),
                lexical=round(max(s.lexical for s in sections), 4),
            )
        made = explained.semantic * explained.semantic_weight + explained.lexical * explained.lexical_weight
        return msgspec.structs.replace(explained, sections=round(max(score - made, 0.0), 4))

    @staticmethod
    def _explain(scored: Scored, mode: Mode | None, weights: Weights | None) -> Explain | None:
        """Each signal's score and weight behind one chunk's score (None: not asked for)."""
        if weights is None:
            return None
        semantic_weight = 1.0 if mode == Mode.SEMANTIC else 0.0 if mode == Mode.LEXICAL else weights.semantic
        return Explain(
            semantic=round(scored.semantic, 4), semantic_weight=round(semantic_weight, 4),
            lexical=round(scored.lexical, 4), lexical_weight=round(1.0 - semantic_weight, 4),
            cosine=round(scored.cosine, 4) if mode != Mode.LEXICAL else None,
            coverage=None if scored.coverage is None else round(scored.coverage, 4),
            bm25_share=None if scored.bm25_share is None else round(scored.bm25_share, 4),
        )

    def _hit(self, scored: Scored, score: float, more: int, terms: list[Term], explain: Explain | None = None) -> Hit:
        row = scored.row
        return Hit(
            path=row.path, start_line=row.start_line, end_line=row.end_line,
            title=row.title, breadcrumb=row.breadcrumb,
            snippet=make_snippet(row.body, terms), score=round(float(score), 4),
            signals=scored.signals, more=more, root=str(self.root), explain=explain,
        )
