"""Related notes: near a note (or one of its sections) by meaning, links and shared tags."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kbls.indexing.chunk import BREADCRUMB_SEP
from kbls.notepath import file_stem
from kbls.query.filters import Filters
from kbls.results import Hit
from kbls.retrieval.snippet import make_snippet
from kbls.storage.roles import Backend, VectorSearch

#: below this cosine similarity a note is not "related" by meaning alone (MiniLM scale: unrelated
#: notes score around 0 to 0.15, notes on one topic 0.3 and up).
RELATED_MIN_SIMILARITY = 0.25
#: what a link in either direction adds to a note's score, and each shared tag (up to three).
LINK_BONUS = 0.15
TAG_BONUS = 0.05


@dataclass
class _Candidate:
    rowid: int
    similarity: float = 0.0
    title: str = ""
    section: str = ""
    reasons: list[str] = field(default_factory=list)


def section_of(title: str, breadcrumb: str) -> str:
    """The breadcrumb below the note's title: `Title > Setup > Final steps` -> `Setup > Final
    steps`; "" for the note's opening section."""
    crumbs = [c.strip() for c in breadcrumb.split(BREADCRUMB_SEP.strip())] if breadcrumb else []
    if crumbs and crumbs[0] == title.strip():
        crumbs = crumbs[1:]
    return BREADCRUMB_SEP.join(c for c in crumbs if c)


def similarity_reason(title: str, breadcrumb: str) -> str:
    """Why a note is related by meaning, naming only what its title does not: the section
    nearest in meaning (`similar to § Final steps`), or `similar in meaning` for its opening.
    The score is the hit's own, shown beside it."""
    section = section_of(title, breadcrumb)
    return f"similar to § {section}" if section else "similar in meaning"


def related_notes(store: Backend, vectors: VectorSearch, root: Path, rel: str, line: int | None, limit: int) -> list[Hit]:
    """Notes near the note at `rel` (or its section at `line`); never the note itself."""
    info = store.file_info(rel)
    if info is None:
        return []
    file_id: int = info.id
    chunks = store.file_chunks(rel)
    source = chunks
    if line is not None and chunks:
        inside = [c for c in chunks if c.start_line <= line <= c.end_line]
        source = inside[:1] or [min(chunks, key=lambda c: abs(c.start_line - line))]
    candidates: dict[int, _Candidate] = {}  # file_id -> its nearest chunk
    if source:
        found = vectors.vectors([c.embedding_id for c in source])
        if len(found):
            query = found.mean(axis=0)
            query /= max(float(np.linalg.norm(query)), 1e-12)
            nearest = vectors.top(query, max(limit * 20, 200))
            score_of = dict(nearest)
            pairs = store.chunks_for_embeddings([e for e, _ in nearest], Filters())
            rows = store.chunk_rows([rowid for _, rowid in pairs])
            for embedding_id, rowid in pairs:
                row = rows.get(rowid)
                if row is None:
                    continue  # rewritten by the indexer meanwhile
                score = score_of[embedding_id]
                if row.file_id == file_id or score < RELATED_MIN_SIMILARITY:
                    continue
                best = candidates.get(row.file_id)
                if best is None or score > best.similarity:
                    candidates[row.file_id] = _Candidate(rowid, score, row.title, row.breadcrumb)
    outgoing = store.outgoing_links(file_id)
    # a markdown link may leave out `.md`, as definition reads it (`LinkResolver.resolve`)
    paths = [t for k, t in outgoing if k == "path"]
    links_to = store.resolve_link_targets(
        [*paths, *(t + ".md" for t in paths)], [t for k, t in outgoing if k == "wiki"]
    )
    names = {file_stem(rel), rel, rel.rsplit(".", 1)[0], info.title, *info.aliases}
    linked_from = store.incoming_links(rel, sorted(names))
    if rel.endswith(".md"):
        linked_from |= store.incoming_links(rel.removesuffix(".md"), [])
    shared = store.files_sharing_tags(file_id)
    extra_ids = (links_to | linked_from | set(shared)) - set(candidates) - {file_id}
    for other, rowid in store.first_chunk_of_files(extra_ids).items():
        candidates[other] = _Candidate(rowid)
    scored: list[tuple[float, int, list[str]]] = []
    for other, cand in candidates.items():
        reasons = []
        score = cand.similarity
        if cand.similarity > 0:
            reasons.append(similarity_reason(cand.title, cand.section))
        if other in links_to:
            score += LINK_BONUS
            reasons.append("linked from here")
        if other in linked_from:
            score += LINK_BONUS
            reasons.append("links here")
        if other in shared:
            score += TAG_BONUS * min(len(shared[other]), 3)
            reasons.append("shared tags: " + ", ".join(sorted(shared[other])))
        scored.append((score, cand.rowid, reasons))
    scored.sort(key=lambda s: (-s[0], s[1]))
    scored = scored[:limit]
    rows = store.chunk_rows([rowid for _, rowid, _ in scored])
    hits = []
    for score, rowid, reasons in scored:
        row = rows.get(rowid)
        if row is None:
            continue
        hits.append(
            Hit(
                path=row.path, start_line=row.start_line, end_line=row.end_line,
                title=row.title, breadcrumb=row.breadcrumb, snippet=make_snippet(row.body, []),
                score=round(score, 6), reasons=reasons, root=str(root),
            )
        )
    return hits
