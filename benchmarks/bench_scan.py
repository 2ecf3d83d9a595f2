"""The semantic scan (`kbls.retrieval.vectors.VectorIndex`): the sign-bit prefilter with exact
rescoring against the exact scan, side by side in one run.

- `sizes`: 1k, 10k, 50k and 200k random unit vectors × 384 (as the daemon benchmark makes them;
  queries are perturbed corpus vectors), each held as the daemon holds it (float32 below
  COMPACT_FROM, float16 from there, plus the sign bits); per size the two paths interleaved
  query by query (k = 50, what the engine asks for), medians and p99 of `top`, recall@10 of the
  fast path against the exact one, and the bytes held.
- `--before SHARE COMPACT_FROM`: each size also held and searched with those settings (the
  previous ones: 0.05 50000), interleaved query by query with the current ones in the same run.
- `--like-real`: the same at those sizes on vectors drawn like the shared sets' real ones
  (`LikeReal`: with their topics, and a Gaussian of their shape alone), searched by the sets'
  real queries.
- `real`: recall@10 of the fast path forced on (PREFILTER_FROM = 0) against the exact scan on
  real MiniLM vectors: each shared set's store (read-only, `--stores`) and its queries embedded
  by the bundled model, and the four sets' vectors pooled with all their queries.

    .venv/bin/python benchmarks/bench_scan.py [--sizes 1000 10000 50000 200000] [--stores DIR]
        [--before 0.05 50000] [--like-real 50000 200000]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as `kbls serve` does

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "server"))

from kbls.retrieval import vectors  # noqa: E402
from kbls.retrieval.vectors import VectorIndex  # noqa: E402

EVAL = Path(os.environ.get("KBLS_EVAL_DIR", REPO.parent / "shared" / "eval"))
SETS = ("rust-by-example", "til", "otel-docs", "pkm")
K = 50


def index_of(ids: np.ndarray, matrix: np.ndarray, compact_from: int | None = None) -> VectorIndex:
    class _NoStore:
        dimension = matrix.shape[1]

    index = VectorIndex(cast(Any, _NoStore()))
    index.sync = lambda: None  # type: ignore[method-assign]
    saved = vectors.COMPACT_FROM
    vectors.COMPACT_FROM = saved if compact_from is None else compact_from
    try:
        index.load(ids, matrix)
    finally:
        vectors.COMPACT_FROM = saved
    return index


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def recall_at_10(fast: list[tuple[int, float]], exact: list[tuple[int, float]]) -> float:
    return len({e for e, _ in fast[:10]} & {e for e, _ in exact[:10]}) / 10


#: (vectors, queries) of one size: `random_corpus` or a `LikeReal`
Corpus = Callable[[int, np.random.Generator, int], tuple[np.ndarray, np.ndarray]]


def random_corpus(n: int, rng: np.random.Generator, queries: int) -> tuple[np.ndarray, np.ndarray]:
    """Random unit vectors; queries are corpus vectors perturbed by noise of norm 0.5."""
    matrix = rng.standard_normal((n, 384), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    picks = rng.integers(0, n, queries)
    qs = matrix[picks] + 0.5 * rng.standard_normal((queries, 384), dtype=np.float32) / np.sqrt(384)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    return matrix, qs


@dataclass(frozen=True)
class LikeReal:
    """Vectors drawn like the shared sets' real ones, searched by the sets' real queries (no real
    corpus of 50k–200k chunks is at hand, and random unit vectors are a worst case no workspace
    has: real MiniLM vectors are far from isotropic, their mean has norm ~0.36).

    `spread` None: a Gaussian of the real vectors' mean and covariance, normalised: their shape
    without their topics (a lower bound). `spread` s: topics: each vector a real one plus s times
    a draw of that covariance, normalised; at 0.8 a drawn vector's nearest real vector has a
    median cosine of 0.81, as a real vector's nearest other has 0.83. No real vector is itself
    in the corpus, so the real queries' neighbours are drawn ones."""

    matrix: np.ndarray
    queries: np.ndarray
    spread: float | None = 0.8

    def __call__(self, n: int, rng: np.random.Generator, queries: int) -> tuple[np.ndarray, np.ndarray]:
        factor = np.linalg.cholesky(np.cov(self.matrix, rowvar=False) + 1e-6 * np.eye(self.matrix.shape[1]))
        drawn = np.empty((n, self.matrix.shape[1]), dtype=np.float32)
        for start in range(0, n, 10_000):
            count = min(10_000, n - start)
            noise = rng.standard_normal((count, self.matrix.shape[1])) @ factor.T
            if self.spread is None:
                block = self.matrix.mean(axis=0) + noise
            else:
                block = self.matrix[rng.integers(0, len(self.matrix), count)] + self.spread * noise
            drawn[start : start + count] = block / np.linalg.norm(block, axis=1, keepdims=True)
        picks = rng.permutation(len(self.queries))[:queries]
        return drawn, self.queries[picks]


def sizes(
    counts: list[int], queries: int, repeats: int, before: tuple[float, int] | None, corpus: Corpus = random_corpus
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in counts:
        rng = np.random.default_rng(1)
        matrix, qs = corpus(n, rng, queries)
        ids = np.arange(1, n + 1, dtype=np.int64)
        # (label, index, share): the current settings and, when asked, the previous ones
        variants = [("now", index_of(ids, matrix), vectors.RESCORE_SHARE)]
        if before is not None:
            variants.append(("before", index_of(ids, matrix, int(before[1])), before[0]))
        del matrix
        times: dict[str, list[float]] = {f"{label} {path}": [] for label, _, _ in variants for path in ("fast", "exact")}
        recall: dict[str, list[float]] = {label: [] for label, _, _ in variants}
        saved = vectors.RESCORE_SHARE
        try:
            for _ in range(repeats):
                for q in qs:
                    for label, index, share in variants:
                        vectors.RESCORE_SHARE = share
                        answers = {}
                        for path in ("fast", "exact"):
                            started = time.perf_counter()
                            answers[path] = index.top(q, K, exact=path == "exact")
                            times[f"{label} {path}"].append((time.perf_counter() - started) * 1000)
                        recall[label].append(recall_at_10(answers["fast"], answers["exact"]))
        finally:
            vectors.RESCORE_SHARE = saved
        result: dict[str, Any] = {}
        for label, index, share in variants:
            snap = index._snapshot
            result[label] = {
                "fast_p50_ms": round(statistics.median(times[f"{label} fast"]), 2),
                "fast_p99_ms": round(pct(times[f"{label} fast"], 99), 2),
                "exact_p50_ms": round(statistics.median(times[f"{label} exact"]), 2),
                "exact_p99_ms": round(pct(times[f"{label} exact"], 99), 2),
                "recall_at_10": round(float(np.mean(recall[label])), 4),
                "min_recall_at_10": round(float(np.min(recall[label])), 2),
                "held_mb": round((snap.rows.nbytes + snap.signs.nbytes + snap.ids.nbytes) / 1e6, 1),
                "dtype": str(snap.rows.dtype),
                "share": share,
                "prefilter": n >= vectors.PREFILTER_FROM,
            }
        out[str(n)] = result if before is not None else result["now"]
        print(f"{n}: {out[str(n)]}", file=sys.stderr, flush=True)
    return out


def _store_vectors(store_file: Path) -> np.ndarray:
    """Every vector of a store, read from a private copy (the store may be in use)."""
    import sqlite_vec

    from kbls.storage.connection import SQLITE

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy.sqlite3"
        source = SQLITE.connect(f"file:{store_file}?mode=ro", uri=True)
        target = SQLITE.connect(str(copy))
        source.backup(target)
        source.close()
        target.enable_load_extension(True)
        sqlite_vec.load(target)
        rows = target.execute("SELECT embedding FROM vec_embeddings ORDER BY rowid").fetchall()
        target.close()
    matrix: np.ndarray = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1).copy()
    return matrix


def _recall(matrix: np.ndarray, queries: list[np.ndarray]) -> dict[str, Any]:
    """Recall@10 of the fast path (forced on) against the exact scan, as shipped and with the
    share alone (no MIN_RESCORE floor, as at 200k where the share is far above it)."""
    index = index_of(np.arange(1, len(matrix) + 1, dtype=np.int64), matrix)
    recall, share_only = [], []
    floor = vectors.MIN_RESCORE
    for q in queries:
        exact = index.top(q, K, exact=True)
        recall.append(recall_at_10(index.top(q, K), exact))
        vectors.MIN_RESCORE = 0
        share_only.append(recall_at_10(index.top(q, K), exact))
        vectors.MIN_RESCORE = floor
    return {
        "vectors": len(matrix),
        "queries": len(queries),
        "recall_at_10": round(float(np.mean(recall)), 4),
        "min_recall_at_10": round(float(np.min(recall)), 2),
        "rescored": max(int(len(matrix) * vectors.RESCORE_SHARE), vectors.MIN_RESCORE, K),
        "share_only_recall_at_10": round(float(np.mean(share_only)), 4),
        "share_only_min_recall_at_10": round(float(np.min(share_only)), 2),
        "share_only_rescored": max(int(len(matrix) * vectors.RESCORE_SHARE), K),
    }


def real_sets(stores: Path) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(set, its store's vectors, its queries embedded by the bundled model) for each shared set
    whose store is under `stores`."""
    from kbls.indexing.embed import Embedder

    embedder = Embedder()
    found_sets = []
    for name in SETS:
        found = sorted((stores / name).glob("store*/kbls.sqlite3"), key=lambda p: p.stat().st_mtime)
        queries_file = EVAL / f"{name}-queries.tsv"
        if not found or not queries_file.exists():
            continue
        with queries_file.open(encoding="utf-8") as handle:
            texts = [row[0] for row in csv.reader(handle, delimiter="\t")][1:]
        queries = np.vstack([embedder.embed_query(text) for text in texts]).astype(np.float32)
        found_sets.append((name, _store_vectors(found[-1]), queries))
    return found_sets


def real(found_sets: list[tuple[str, np.ndarray, np.ndarray]]) -> dict[str, Any]:
    """Per set, then the four sets' vectors pooled with all their queries (the largest real
    corpus at hand)."""
    out: dict[str, Any] = {}
    saved = vectors.PREFILTER_FROM
    vectors.PREFILTER_FROM = 0  # the fast path on sets far below its threshold
    try:
        for name, matrix, queries in found_sets:
            out[name] = _recall(matrix, list(queries))
            print(f"{name}: {out[name]}", file=sys.stderr, flush=True)
        if len(found_sets) > 1:
            out["pooled"] = _recall(np.vstack([m for _, m, _ in found_sets]), list(np.vstack([q for _, _, q in found_sets])))
            print(f"pooled: {out['pooled']}", file=sys.stderr, flush=True)
    finally:
        vectors.PREFILTER_FROM = saved
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000, 50_000, 200_000])
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", type=float, nargs=2, default=None, metavar=("SHARE", "COMPACT_FROM"))
    parser.add_argument("--stores", type=Path, default=None, help="a folder of <set>/store*/kbls.sqlite3 (real vectors)")
    parser.add_argument(
        "--like-real",
        type=int,
        nargs="*",
        default=[],
        help="sizes of the stores' real vectors filled up with vectors drawn like them, searched by their queries",
    )
    args = parser.parse_args(argv)
    started = os.getloadavg()
    before = None if args.before is None else (args.before[0], int(args.before[1]))
    result: dict[str, Any] = {"sizes": sizes(args.sizes, args.queries, args.repeats, before)}
    if args.stores is not None:
        found_sets = real_sets(args.stores)
        result["real"] = real(found_sets)
        if args.like_real:
            pooled, pooled_queries = np.vstack([m for _, m, _ in found_sets]), np.vstack([q for _, _, q in found_sets])
            for label, spread in (("topics", 0.8), ("gaussian", None)):
                like = LikeReal(pooled, pooled_queries, spread)
                result[f"like_real_{label}"] = sizes(args.like_real, args.queries, args.repeats, before, like)
    result["load_average"] = {"start": [round(x, 2) for x in started], "end": [round(x, 2) for x in os.getloadavg()]}
    result["settings"] = {
        "PREFILTER_FROM": vectors.PREFILTER_FROM,
        "RESCORE_SHARE": vectors.RESCORE_SHARE,
        "MIN_RESCORE": vectors.MIN_RESCORE,
        "COMPACT_FROM": vectors.COMPACT_FROM,
    }
    print(json.dumps(result, indent=1))
    shutil.rmtree(Path(tempfile.gettempdir()) / "kbls-bench-scan", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
