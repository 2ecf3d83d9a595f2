"""Ranking lab: replays the shared eval sets' queries through the real `HybridSearcher` with one
candidate-, signal- or aggregation-level change at a time, on stores indexed once, and prints
hybrid binary nDCG@10 per set, off-topic queries left empty, and a leave-one-set-out table.

A variant is a `Variant` (below); `LabSearcher` overrides only the step it changes, so the
"today" variant is `Engine.search` itself: it gives `kbls eval`'s binary figures on the four
sets (0.900 / 0.893 / 0.817 / 0.794 at cebb7a3).

Usage (stores copied beside the worktree, never the shared ones; all commands niced)::

    .venv/bin/python benchmarks/rank_lab.py --prepare /work/stores          # copies, own roots
    .venv/bin/python benchmarks/rank_lab.py --dump .cache/lab/variants.json  # every variant
    .venv/bin/python benchmarks/rank_lab.py --dump .cache/lab/variants.json --compare today "length penalty 0.02"
    .venv/bin/python benchmarks/baseline_per_query.py otel-docs .cache/lab/otel-base.json
    .venv/bin/python benchmarks/rank_lab.py --queries otel-docs --against .cache/lab/otel-base.json

`--lab DIR` (default .cache/lab) holds `<set>/src` and `<set>/store`; the queries are read from
`--eval` (../shared/eval beside the clone). `LAB_VARIANTS="name,name"` runs a subset.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec
import numpy as np

from kbls.engine import Engine
from kbls.evaluate import binary_ndcg, read_queries
from kbls.limits import Mode
from kbls.query.filters import Filters
from kbls.retrieval import fusion, hybrid
from kbls.retrieval.hybrid import HybridSearcher, Scored

REPO = Path(__file__).resolve().parents[1]
SETS = ("rust-by-example", "til", "otel-docs", "pkm")
OFF_TOPIC = {"pkm": "pkm-off-topic.txt"}


@dataclass(frozen=True)
class Variant:
    """One change to the ranking; the defaults are today's code."""

    name: str = "today"
    #: semantic candidates per requested hit (hybrid.CANDIDATES_PER_HIT)
    per_hit: int = hybrid.CANDIDATES_PER_HIT
    #: cosine between two candidate chunks' vectors above which the later one is a near-duplicate
    #: (None: no de-duplication)
    dup_cosine: float | None = None
    #: "extend": near-duplicates stay candidates but do not count toward the semantic top N;
    #: "drop": they leave the candidates
    dup_mode: str = "extend"
    #: a note's next-best section's share (fusion.SECTION_SHARE)
    section_share: float = fusion.SECTION_SHARE
    semantic_weight: float = 0.75
    #: "max": a note takes its best value of each signal; "best": its best section's fused score
    note_signals: str = "max"
    #: lexical evidence = coverage ** cov_power * (BM25 share) ** share_power (today 2, 0.5)
    cov_power: float = 2.0
    share_power: float = 0.5
    #: a note's semantic signal loses length_penalty * log(its matching sections) (0: none)
    length_penalty: float = 0.0
    #: what the length penalty counts: "candidates" (the note's matching sections), "chunks"
    #: (all its chunks in the store); its shape: "log", "sqrtlog"
    length_of: str = "candidates"
    length_shape: str = "log"
    #: a note's score also gains agreement * its best semantic signal * its best coverage (a
    #: product: words and meaning agreeing on the note, which neither signal alone says)
    agreement: float = 0.0
    #: the coverage in the agreement term raised to this power
    agreement_power: float = 1.0
    #: hubness: a chunk's cosine loses hub * (its mean cosine to its `hub_k` nearest chunks of
    #: other notes - that mean over the store), a dense neighbourhood being near everything
    hub: float = 0.0
    hub_k: int = 10
    #: the relevance floor (search.min_score; None: the config's)
    min_score: float | None = None


class LabSearcher(HybridSearcher):
    """`HybridSearcher` with `variant`'s changes."""

    variant: Variant = Variant()

    def _semantic(self, vector: np.ndarray, wanted: int, filters: Filters) -> list[tuple[int, float]]:
        v = self.variant
        if v.dup_cosine is None:
            return super()._semantic(vector, wanted, filters)
        # Take more than wanted, then walk best first: a candidate whose vector is within
        # dup_cosine of one already taken does not count toward wanted.
        nearest = self.vectors.top(vector, wanted * 4, None)
        ids = [e for e, _ in nearest]
        mat = self.vectors.vectors(ids)
        kept_vecs: list[int] = []
        chosen: list[tuple[int, float]] = []
        distinct = 0
        for i, (e, s) in enumerate(nearest):
            dup = bool(kept_vecs) and float(np.max(mat[kept_vecs] @ mat[i])) >= v.dup_cosine
            if not dup:
                kept_vecs.append(i)
                distinct += 1
            if not dup or v.dup_mode == "extend":
                chosen.append((e, s))
            if distinct >= wanted:
                break
        score_of = dict(chosen)
        pairs = self.store.chunks_for_embeddings([e for e, _ in chosen], filters)
        return sorted(((rowid, score_of[e]) for e, rowid in pairs), key=lambda p: (-p[1], p[0]))

    _counts: dict[str, int] | None = None

    def chunk_counts(self) -> dict[str, int]:
        """Chunks per note path, read once."""
        if self._counts is None:
            import sqlite3

            db = sqlite3.connect(f"file:{self.store.path}?mode=ro", uri=True)  # type: ignore[attr-defined]
            rows = db.execute("SELECT f.path, count(*) FROM chunks c JOIN files f ON f.id = c.file_id GROUP BY f.path")
            self._counts = {path: count for path, count in rows.fetchall()}
        return self._counts

    _density: dict[int, float] | None = None

    def density(self) -> dict[int, float]:
        """Per embedding id: its mean cosine to its `hub_k` nearest vectors (itself and the
        vectors of its own note left out), centred on the store's mean; computed once."""
        if self._density is None:
            import sqlite3

            db = sqlite3.connect(f"file:{self.store.path}?mode=ro", uri=True)  # type: ignore[attr-defined]
            note = dict(db.execute("SELECT embedding_id, file_id FROM chunks").fetchall())
            self.vectors.sync()
            ids, rows = self.vectors.ids, self.vectors.matrix
            files = np.array([note.get(int(e), -1) for e in ids])
            k = self.variant.hub_k
            means = np.empty(len(ids), dtype=np.float32)
            for start in range(0, len(ids), 1024):
                sims = rows[start : start + 1024] @ rows.T
                sims[files[start : start + 1024, None] == files[None, :]] = -1.0
                means[start : start + 1024] = np.sort(sims, axis=1)[:, -k:].mean(axis=1)
            centre = float(means.mean())
            self._density = {int(e): float(m) - centre for e, m in zip(ids, means, strict=True)}
        return self._density

    def _score(self, text: str, filters: Filters, mode: Mode, wanted: int) -> tuple[list[Scored], fusion.Weights]:
        scored, weights = super()._score(text, filters, mode, wanted)
        v = self.variant
        if v.hub and mode != Mode.LEXICAL:
            density = self.density()
            out = []
            for s in scored:
                if s.waiting:
                    out.append(s)
                    continue
                cosine = s.cosine - v.hub * density.get(s.row.embedding_id, 0.0)
                sem = fusion.semantic_confidence(cosine)
                score = sem if mode == Mode.SEMANTIC else weights.fuse(sem, s.lexical)
                out.append(Scored(s.row, sem, s.lexical, score, s.signals, cosine, s.coverage, s.bm25_share, s.waiting))
            out.sort(key=Scored.order)
            scored = out
        if (v.cov_power, v.share_power) == (2.0, 0.5) or mode == Mode.SEMANTIC:
            return scored, weights
        out = []
        for s in scored:
            lex = 0.0
            if s.coverage is not None and s.bm25_share:
                lex = s.coverage**v.cov_power * min(s.bm25_share, 1.0) ** v.share_power
            score = lex if mode == Mode.LEXICAL or s.waiting else weights.fuse(s.semantic, lex)
            out.append(Scored(s.row, s.semantic, lex, score, s.signals, s.cosine, s.coverage, s.bm25_share, s.waiting))
        out.sort(key=Scored.order)
        return out, weights

    def note_score(self, sections: list[Scored], mode: Mode | None, weights: fusion.Weights | None = None) -> float:
        v = self.variant
        if v.agreement and mode == Mode.HYBRID and not all(s.waiting for s in sections):
            base = super().note_score(sections, mode, weights)
            cover = max((s.coverage or 0.0) for s in sections) ** v.agreement_power
            return base + v.agreement * max(s.semantic for s in sections) * cover
        if v.length_penalty and mode == Mode.HYBRID and not all(s.waiting for s in sections):
            fuse = (weights or self.weights).fuse
            n = len(sections) if v.length_of == "candidates" else self.chunk_counts()[sections[0].row.path]
            grow = math.log(n) if v.length_shape == "log" else math.sqrt(math.log(n))
            sem = max(s.semantic for s in sections) - v.length_penalty * grow
            best = fuse(sem, max(s.lexical for s in sections))
            return fusion.fused_note_score(best, sections[1].score if len(sections) > 1 else 0.0)
        if v.note_signals == "max" or mode != Mode.HYBRID or all(s.waiting for s in sections):
            return super().note_score(sections, mode, weights)
        return fusion.fused_note_score(sections[0].score, sections[1].score if len(sections) > 1 else 0.0)


@dataclass
class SetRun:
    name: str
    engine: Engine
    queries: list[tuple[str, list[str]]]
    off_topic: list[str]


def open_sets(lab: Path, eval_dir: Path, names: list[str]) -> Iterator[SetRun]:
    for name in names:
        engine = Engine(lab / name / "src", store_dir=lab / name / "store", read_only=True)
        # a copy made by rank_lab_fields.py / rank_lab_opening.py answers its set's queries
        base = max((s for s in SETS if name.startswith(s)), key=len, default=name)
        queries = read_queries(eval_dir / f"{base}-queries.tsv")
        listed = eval_dir / OFF_TOPIC.get(base, "off-topic-queries.txt")
        off = [line.strip() for line in listed.read_text().splitlines() if line.strip()]
        yield SetRun(name, engine, queries, off)


def use(run: SetRun, variant: Variant) -> LabSearcher:
    old = run.engine.searcher
    config = old.config if variant.min_score is None else msgspec.structs.replace(old.config, min_score=variant.min_score)
    searcher = LabSearcher(old.root, old.store, old.vectors, old.embedder, config, old.reranker)
    searcher.variant = variant
    searcher.weights = fusion.Weights.of(variant.semantic_weight, 1.0 - variant.semantic_weight)
    hybrid.CANDIDATES_PER_HIT = variant.per_hit
    fusion.SECTION_SHARE = variant.section_share
    run.engine.searcher = searcher
    return searcher


@dataclass
class Result:
    ndcg: float
    per_query: list[tuple[str, float, list[str]]]
    empty: int


def measure(run: SetRun, variant: Variant, mode: str = "hybrid", off_topic: bool = True) -> Result:
    use(run, variant)
    per = []
    for query, relevant in run.queries:
        paths = [h.path for h in run.engine.search(query, limit=10, mode=mode, group_by_file=True).hits]
        per.append((query, binary_ndcg(paths, relevant, 10), paths))
    empty = -1
    if off_topic:
        empty = sum(1 for q in run.off_topic if not run.engine.search(q, limit=10).hits)
    return Result(sum(p[1] for p in per) / max(len(per), 1), per, empty)


def variants() -> list[Variant]:
    """The variants compared in docs/adr/0003-ranking.md (2026-12-02 evening amendment); a
    family is the name without its last word (its parameter)."""
    out = [Variant()]
    for c in (0.99, 0.98, 0.95):
        out.append(Variant(f"dedup extend {c}", dup_cosine=c))
    out.append(Variant("dedup drop 0.98", dup_cosine=0.98, dup_mode="drop"))
    for n in (3, 10, 20):
        out.append(Variant(f"per hit {n}", per_hit=n))
    for share in (0.0, 0.03, 0.1):
        out.append(Variant(f"note best section {share}", note_signals="best", section_share=share))
    for p in (1.0, 1.5, 3.0):
        out.append(Variant(f"coverage power {p}", cov_power=p))
    for p in (0.0, 0.25, 1.0):
        out.append(Variant(f"bm25 share power {p}", share_power=p))
    for g in (0.01, 0.015, 0.02, 0.03, 0.04):
        out.append(Variant(f"length penalty {g}", length_penalty=g))
    for g in (0.01, 0.02, 0.03):
        out.append(Variant(f"chunk-count penalty {g}", length_penalty=g, length_of="chunks"))
    for g in (0.02, 0.04):
        out.append(Variant(f"sqrt-log penalty {g}", length_penalty=g, length_shape="sqrtlog"))
    for g in (0.01, 0.02, 0.03):
        out.append(Variant(f"penalty, no share {g}", length_penalty=g, section_share=0.0))
    for a in (0.05, 0.1, 0.2, 0.3):
        out.append(Variant(f"agreement {a}", agreement=a))
    for h in (0.1, 0.2, 0.3, 0.5):
        out.append(Variant(f"hubness {h}", hub=h))
    for m in (0.20, 0.22, 0.24, 0.28):
        out.append(Variant(f"floor {m}", min_score=m))
    only = os.environ.get("LAB_VARIANTS")  # a comma-separated subset by name
    return [v for v in out if v.name == "today" or not only or v.name in only.split(",")]


def leave_one_out(table: dict[str, dict[str, Result]], families: dict[str, list[str]], today: str) -> list[str]:
    """Per family, per held-out set: the variant with the best mean on the other three (off-topic
    >= 18 on each), its figure on the held-out set against today's."""
    lines = [
        "| family | held out | chosen | their mean | held-out | today | change | holds |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    sets = list(next(iter(table.values())).keys())
    for family, names in families.items():
        for out in sets:
            rest = [s for s in sets if s != out]
            ok = [n for n in names if all(table[n][s].empty < 0 or table[n][s].empty >= 18 for s in rest)]
            if not ok:
                continue
            best = max(ok, key=lambda n: (sum(table[n][s].ndcg for s in rest), n == today))
            mean = sum(table[best][s].ndcg for s in rest) / len(rest)
            got, base = table[best][out].ndcg, table[today][out].ndcg
            holds = got >= base - 1e-9 and (table[best][out].empty < 0 or table[best][out].empty >= 18)
            lines.append(
                f"| {family} | {out} | {best} | {mean:.3f} | {got:.3f} ({table[best][out].empty}/20) | {base:.3f} "
                f"| {got - base:+.3f} | {'yes' if holds else 'no'} |"
            )
    return lines


def per_query(run: SetRun, against: Path | None) -> None:
    """Each query's hybrid / semantic / lexical nDCG and, with `against` (baseline_per_query.py's
    JSON), the baseline's hybrid; then, for every query where kbls hybrid loses to either, where
    each relevant file ranks in each list."""
    base = json.loads(against.read_text())["hybrid"] if against else None
    modes = {m: measure(run, Variant(), m, False) for m in ("hybrid", "semantic", "lexical")}
    print(f"## {run.name}: hybrid {modes['hybrid'].ndcg:.3f} semantic {modes['semantic'].ndcg:.3f} "
          f"lexical {modes['lexical'].ndcg:.3f}" + (f" baseline {sum(b['ndcg'] for b in base) / len(base):.3f}" if base else ""))
    for i, (query, relevant) in enumerate(run.queries):
        h, sem, lex = (modes[m].per_query[i] for m in ("hybrid", "semantic", "lexical"))
        b = base[i]["ndcg"] if base else float("nan")
        mark = " <" if h[1] < max(b if base else 0, sem[1], lex[1]) - 0.05 else ""
        print(f"{h[1]:.2f} sem {sem[1]:.2f} lex {lex[1]:.2f} base {b:.2f}{mark}  {query}")
        if mark:
            for path in relevant:
                places = [str(r[2].index(path) + 1) if path in r[2] else "-" for r in (h, sem, lex)]
                if base:
                    places.append(str(base[i]["ranked"].index(path) + 1) if path in base[i]["ranked"] else "-")
                print(f"      {'/'.join(places):12} {path}")
            print(f"      kbls top: {', '.join(h[2][:5])}")


def prepare(source: Path, lab: Path, names: list[str]) -> None:
    """Copy each set's workspace and store from `source` into `lab`, the copy recorded as its
    store's root (a store refuses a second root while its first still exists)."""
    import shutil
    import sqlite3

    for name in names:
        target = lab / name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source / name, target, ignore=shutil.ignore_patterns("writer.lock"))
        db = sqlite3.connect(target / "store" / "kbls.sqlite3")
        db.execute("UPDATE meta SET value = ? WHERE key = 'root'", (str((target / "src").resolve()),))
        db.commit()
        db.close()
        print(f"{target}: copied", file=sys.stderr)


def compare(dump: Path, a: str, b: str) -> None:
    """The queries whose nDCG differs between variants `a` and `b` of a `--dump`."""
    table = json.loads(dump.read_text())
    for name, rows in table[a].items():
        for (query, x, top_a), (_, y, top_b) in zip(rows, table[b][name], strict=True):
            if abs(x - y) > 1e-9:
                print(f"{name:16} {x:.2f} -> {y:.2f}  {query}\n    {top_a[:4]}\n    {top_b[:4]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab", type=Path, default=REPO / ".cache" / "lab")
    parser.add_argument("--eval", type=Path, default=REPO.parent.parent / "shared" / "eval")
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--modes", action="store_true", help="also print today's semantic and lexical figures")
    parser.add_argument("--dump", type=Path, help="write per-query paths of every variant as JSON")
    parser.add_argument("--queries", help="per-query figures of today's ranking on this set")
    parser.add_argument("--against", type=Path, help="with --queries: baseline_per_query.py's JSON")
    parser.add_argument("--prepare", type=Path, help="copy FROM/<set>/{src,store} into --lab first")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="with --dump: queries that differ")
    args = parser.parse_args()
    if args.compare:
        compare(args.dump, *args.compare)
        return
    if args.prepare:
        prepare(args.prepare, args.lab, args.sets.split(","))
        return
    if not args.eval.exists():
        args.eval = Path("/work/shared/eval")
    if args.queries:
        for run in open_sets(args.lab, args.eval, [args.queries]):
            per_query(run, args.against)
        return
    names = args.sets.split(",")
    table: dict[str, dict[str, Result]] = {}
    chosen = variants()
    for run in open_sets(args.lab, args.eval, names):
        if args.modes:
            for mode in ("semantic", "lexical"):
                print(f"{run.name} {mode} {measure(run, Variant(), mode, False).ndcg:.3f}", file=sys.stderr)
        for v in chosen:
            r = measure(run, v)
            table.setdefault(v.name, {})[run.name] = r
            print(f"{run.name:16} {v.name:28} {r.ndcg:.3f} off-topic empty {r.empty}/20", file=sys.stderr, flush=True)
        run.engine.close()
    print("| variant | " + " | ".join(names) + " | mean | off-topic empty |")
    print("|---|" + "---:|" * (len(names) + 1) + "---|")
    for v in chosen:
        row = table[v.name]
        mean = sum(row[s].ndcg for s in names) / len(names)
        print(f"| {v.name} | " + " | ".join(f"{row[s].ndcg:.3f}" for s in names) + f" | {mean:.3f} | "
              + " / ".join(str(row[s].empty) for s in names) + " |")
    families: dict[str, list[str]] = {}
    for v in chosen:
        families.setdefault(v.name.rsplit(" ", 1)[0] if v.name != "today" else "today", []).append(v.name)
    families = {f: ["today", *n] for f, n in families.items() if f != "today"}
    if len(names) == 4:
        print("\n".join(leave_one_out(table, families, "today")))
    if args.dump:
        args.dump.write_text(json.dumps(
            {v: {s: [(q, n, p) for q, n, p in r.per_query] for s, r in sets.items()} for v, sets in table.items()},
            indent=1,
        ))


if __name__ == "__main__":
    main()
