"""Hybrid search: a semantic and a lexical ranking of chunks, fused, then turned into hits."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kbls.config import SearchConfig
from kbls.indexing.embed import Embedder
from kbls.limits import Mode
from kbls.query.syntax import ParsedQuery, query_terms
from kbls.results import Hit, Signals
from kbls.retrieval.lexical import LexicalRanker
from kbls.retrieval.snippet import make_snippet
from kbls.retrieval.vectors import VectorIndex
from kbls.storage.store import Filters, Store

#: how many candidates each ranking contributes to fusion, per requested hit.
CANDIDATES_PER_HIT = 5
MIN_CANDIDATES = 50


@dataclass(frozen=True)
class Ranked:
    """One chunk in a ranking: its rowid, score (higher is better) and where it came from."""

    rowid: int
    score: float
    signals: Signals


def fuse(semantic: list[tuple[int, float]], lexical: list[tuple[int, float]], config: SearchConfig) -> list[Ranked]:
    """Reciprocal rank fusion: score = sum over rankings of weight / (k + rank)."""
    fused: dict[int, float] = {}
    sem_rank = {rowid: i + 1 for i, (rowid, _) in enumerate(semantic)}
    lex_rank = {rowid: i + 1 for i, (rowid, _) in enumerate(lexical)}
    for rowid, rank in sem_rank.items():
        fused[rowid] = fused.get(rowid, 0.0) + config.semantic_weight / (config.rrf_k + rank)
    for rowid, rank in lex_rank.items():
        fused[rowid] = fused.get(rowid, 0.0) + config.lexical_weight / (config.rrf_k + rank)
    order = sorted(fused.items(), key=lambda p: (-p[1], p[0]))
    return [Ranked(rowid, score, Signals(sem_rank.get(rowid), lex_rank.get(rowid))) for rowid, score in order]


class HybridSearcher:
    """Searches one root's store; the engine validates the request and picks the mode."""

    def __init__(self, root: Path, store: Store, vectors: VectorIndex, embedder: Embedder, config: SearchConfig) -> None:
        self.root = root
        self.store = store
        self.vectors = vectors
        self.embedder = embedder
        self.config = config
        self.lexical = LexicalRanker(store)

    def search(self, parsed: ParsedQuery, limit: int, mode: Mode, group_by_file: bool) -> list[Hit]:
        if not parsed.text.strip():
            if parsed.filters.empty:
                return []
            # Only filters (`tag:rust`): list the matching notes, by path.
            rowids = self.store.first_chunks_matching(parsed.filters, limit)
            return self._hits([Ranked(rowid, 0.0, Signals()) for rowid in rowids], limit, False, [])
        wanted = max(limit * CANDIDATES_PER_HIT * (3 if group_by_file else 1), MIN_CANDIDATES)
        semantic: list[tuple[int, float]] = []
        lexical: list[tuple[int, float]] = []
        if mode in (Mode.HYBRID, Mode.SEMANTIC):
            semantic = self._semantic(self.embedder.embed_query(parsed.text), wanted, parsed.filters)
        if mode in (Mode.HYBRID, Mode.LEXICAL):
            lexical = self.lexical.rank(parsed.text, parsed.filters, wanted)
        if mode == Mode.SEMANTIC:
            scored = [Ranked(rowid, score, Signals(semantic=i + 1)) for i, (rowid, score) in enumerate(semantic)]
        elif mode == Mode.LEXICAL:
            scored = [Ranked(rowid, score, Signals(lexical=i + 1)) for i, (rowid, score) in enumerate(lexical)]
        else:
            scored = fuse(semantic, lexical, self.config)
        return self._hits(scored, limit, group_by_file, query_terms(parsed.text))

    def _semantic(self, vector: np.ndarray, wanted: int, filters: Filters) -> list[tuple[int, float]]:
        allowed = None if filters.empty else self.store.allowed_embeddings(filters)
        if allowed is not None and not len(allowed):
            return []
        nearest = self.vectors.top(vector, wanted, allowed)
        score_of = dict(nearest)
        pairs = self.store.chunks_for_embeddings([e for e, _ in nearest], filters)
        ranked = sorted(((rowid, score_of[e]) for e, rowid in pairs), key=lambda p: (-p[1], p[0]))
        return ranked[:wanted]

    def _hits(self, scored: list[Ranked], limit: int, group_by_file: bool, terms: list[str]) -> list[Hit]:
        chosen: list[tuple[Ranked, int]] = []  # (best chunk of a file, further chunks folded in)
        if group_by_file:
            rows = self.store.chunk_rows([r.rowid for r in scored])
            by_path: dict[str, int] = {}
            for ranked in scored:
                if ranked.rowid not in rows:
                    continue  # rewritten by the indexer since it was ranked
                path = rows[ranked.rowid].path
                if path in by_path:
                    best, more = chosen[by_path[path]]
                    chosen[by_path[path]] = (best, more + 1)
                    continue
                by_path[path] = len(chosen)
                chosen.append((ranked, 0))
            chosen = chosen[:limit]
        else:
            chosen = [(ranked, 0) for ranked in scored[:limit]]
            rows = self.store.chunk_rows([r.rowid for r, _ in chosen])
        hits = []
        for ranked, more in chosen:
            row = rows.get(ranked.rowid)
            if row is None:
                continue  # the indexer rewrote this file between the ranking and this read
            hits.append(
                Hit(
                    path=row.path, start_line=row.start_line, end_line=row.end_line,
                    title=row.title, breadcrumb=row.breadcrumb,
                    snippet=make_snippet(row.body, terms), score=round(float(ranked.score), 6),
                    signals=ranked.signals, more=more, root=str(self.root),
                )
            )
        return hits
