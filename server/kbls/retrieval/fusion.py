"""Scores a person can read: each signal calibrated to 0..1, fused as a weighted mean.

Rank fusion (RRF) gives a chunk the same credit for being first in a ranking whether it matched
the query well or only shared one word with it, so a weak lexical ranking could drag a good
semantic one down. Here each signal is first turned into evidence on a fixed scale:

- semantic: the cosine similarity mapped linearly from `SEMANTIC_ZERO` (unrelated text scores
  around it with MiniLM) to `SEMANTIC_FULL` (close paraphrases), clipped to 0..1;
- lexical: the square of the query's content-word coverage (IDF-weighted share of its words the
  chunk holds, see `retrieval.lexical`: half the words found is a quarter of the evidence) times
  the square root of the chunk's BM25 relative to the best BM25
  of the query, so full coverage by a long chunk that mentions the words once ranks below a
  focused one.

The fused confidence is the weighted mean of the two; a note (group by file) takes its best
chunk's value of each signal, so a note whose title matches the words and whose body matches
the meaning ranks as one note. See docs/adr/ for the measurements behind the constants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: cosine similarity that counts as no evidence / full evidence (all-MiniLM-L6-v2 scale; the
#: off-topic queries of the shared eval sets reach 0.25-0.40, right answers 0.45-0.75).
SEMANTIC_ZERO = 0.10
SEMANTIC_FULL = 0.70


def semantic_confidence(cosine: float) -> float:
    return min(max((cosine - SEMANTIC_ZERO) / (SEMANTIC_FULL - SEMANTIC_ZERO), 0.0), 1.0)


def lexical_confidence(coverage: float, bm25: float, best_bm25: float) -> float:
    """Coverage squared: sharing one word of a four-word query is weak evidence (1/16), not a
    quarter of a match; times the square root of the BM25 share of the query's best chunk."""
    if bm25 <= 0.0 or best_bm25 <= 0.0:
        return 0.0
    return coverage * coverage * math.sqrt(min(bm25 / best_bm25, 1.0))


@dataclass(frozen=True)
class Weights:
    """Share of each signal in the fused score; they sum to 1."""

    semantic: float
    lexical: float

    @classmethod
    def of(cls, semantic_weight: float, lexical_weight: float) -> Weights:
        total = semantic_weight + lexical_weight
        if total <= 0:
            return cls(0.5, 0.5)
        return cls(semantic_weight / total, lexical_weight / total)

    def fuse(self, semantic: float, lexical: float) -> float:
        return self.semantic * semantic + self.lexical * lexical


#: a note's next-best matching section adds this share of its score to the note's (group by
#: file): of two notes whose best sections match alike, the one with a second matching section is
#: more often the note about it. Held leave-one-set-out on the four shared sets (docs/adr/0003-ranking.md).
SECTION_SHARE = 0.03


def fused_note_score(best: float, second: float) -> float:
    """A note's score from its best section's (`best`) and its next-best section's (`second`,
    0 for a note with one matching section): the one rule `--group-by-file` and every per-note
    list (the pickers' rows through `kb/search` `groupByFile`) rank notes by."""
    return best + SECTION_SHARE * second
