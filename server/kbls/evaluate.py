"""Retrieval quality on a TSV of queries: Recall@k, MRR@k and nDCG@k for each search mode.

Relevance is judged per file (hits are grouped by file). The relevant paths of a query are
listed best first; the i-th (0-based) has gain 1/(i+1), so finding the best note first counts
most. `ndcg_binary` is nDCG with every relevant path of gain 1, as the shared eval set's naive
baseline (`../shared/eval/naive_baseline.py`) computes it, so the two can stand side by side.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import msgspec

from kbls.engine import Engine
from kbls.limits import MODES


class ModeScores(msgspec.Struct):
    mode: str
    recall: float
    mrr: float
    ndcg: float
    queries: int
    ndcg_binary: float = 0.0


class EvalReport(msgspec.Struct):
    k: int
    modes: list[ModeScores]


def read_queries(path: Path) -> list[tuple[str, list[str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        if reader.fieldnames is None or not {"query", "relevant"} <= set(reader.fieldnames):
            raise ValueError(f"{path}: expected a header line `query<TAB>relevant`")
        queries = []
        for row in reader:
            if row["relevant"] is None:  # a line without a tab
                raise ValueError(f"{path}:{reader.line_num}: expected `query<TAB>relevant`")
            queries.append((row["query"], [p.strip() for p in row["relevant"].split("|") if p.strip()]))
        return queries


def score_ranking(ranked: list[str], relevant: list[str], k: int) -> tuple[float, float, float]:
    """(recall, reciprocal rank, nDCG) of one ranked list of paths."""
    top = ranked[:k]
    gains = {path: 1.0 / (i + 1) for i, path in enumerate(relevant)}
    recall = sum(1 for p in relevant if p in top) / len(relevant) if relevant else 0.0
    rr = next((1.0 / (i + 1) for i, p in enumerate(top) if p in gains), 0.0)
    return recall, rr, _ndcg(top, gains, k)


def binary_ndcg(ranked: list[str], relevant: list[str], k: int) -> float:
    """nDCG@k with gain 1 for every relevant path (the naive baseline's measure)."""
    return _ndcg(ranked[:k], dict.fromkeys(relevant, 1.0), k)


def _ndcg(top: list[str], gains: dict[str, float], k: int) -> float:
    dcg = sum(gains.get(p, 0.0) / math.log2(i + 2) for i, p in enumerate(top))
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(gains.values(), reverse=True)[:k]))
    return dcg / ideal if ideal else 0.0


def evaluate(engine: Engine, queries_path: Path, k: int = 10, modes: tuple[str, ...] = MODES) -> EvalReport:
    queries = read_queries(queries_path)
    results = []
    for mode in modes:
        sums = [0.0, 0.0, 0.0, 0.0]
        for query, relevant in queries:
            hits = engine.search(query, limit=k, mode=mode, group_by_file=True).hits
            paths = [h.path for h in hits]
            scores = (*score_ranking(paths, relevant, k), binary_ndcg(paths, relevant, k))
            sums = [a + b for a, b in zip(sums, scores, strict=True)]
        n = max(len(queries), 1)
        results.append(ModeScores(mode, sums[0] / n, sums[1] / n, sums[2] / n, len(queries), sums[3] / n))
    return EvalReport(k, results)


def format_table(report: EvalReport) -> str:
    k = report.k
    lines = [f"| mode | nDCG@{k} | nDCG@{k} binary | MRR@{k} | Recall@{k} |", "|---|---|---|---|---|"]
    for m in report.modes:
        lines.append(f"| {m.mode} | {m.ndcg:.3f} | {m.ndcg_binary:.3f} | {m.mrr:.3f} | {m.recall:.3f} |")
    return "\n".join(lines)
