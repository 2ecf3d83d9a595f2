"""CPU time per grouped `Engine.search` with the sections' snippets made for every grouped hit
(as before sections were made on demand) and without them (what a picker asks for as you type).

One process, one engine, one store (bench_daemon's 1,000-chunk Rust by Example copies, built by
`bench_daemon.build_workspace`): `section_snippets=True` and `False` take turns, round by round,
so both meet the same load. Prints the median CPU ms per query of each per mode, the ratio, and
the ungrouped search beside them for reference. Expanding a note asks once with
`section_snippets=True`: the "eager" figure is that request's cost.

    KBLS_EVAL_DIR=/work/shared/eval .venv/bin/python benchmarks/bench_section_snippets.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from bench_daemon import QUERIES, build_workspace  # noqa: E402
from kbls.engine import Engine  # noqa: E402

MODES = ("hybrid", "semantic", "lexical")
#: (grouped, section snippets): the variants timed in turn
VARIANTS = ((True, True), (True, False), (False, False))


def cpu_ms_per_query(engine: Engine, mode: str, limit: int, grouped: bool, section_snippets: bool) -> float:
    for query in QUERIES[:3]:  # warm-up
        engine.search(query, mode=mode, limit=limit, group_by_file=grouped, section_snippets=section_snippets)
    started = time.process_time()
    for query in QUERIES:
        engine.search(query, mode=mode, limit=limit, group_by_file=grouped, section_snippets=section_snippets)
    return (time.process_time() - started) / len(QUERIES) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--limit", type=int, default=20, help="hits per search (the pickers' default)")
    args = parser.parse_args()
    root = build_workspace(1000)
    engine = Engine(root, store_dir=root.parent / f"{root.name}-store", read_only=True)
    times: dict[tuple[bool, bool, str], list[float]] = {}
    sections = {mode: 0 for mode in MODES}
    for mode in MODES:
        for query in QUERIES:
            hits = engine.search(query, mode=mode, limit=args.limit, group_by_file=True).hits
            sections[mode] += sum(len(h.sections) for h in hits)
    for round_ in range(args.rounds):
        order = VARIANTS if round_ % 2 == 0 else tuple(reversed(VARIANTS))
        for grouped, section_snippets in order:
            for mode in MODES:
                spent = cpu_ms_per_query(engine, mode, args.limit, grouped, section_snippets)
                times.setdefault((grouped, section_snippets, mode), []).append(spent)
    engine.close()
    print(f"{len(QUERIES)} queries, limit {args.limit}, {args.rounds} rounds; median CPU ms per query")
    print("| mode | sections per answer | grouped, section snippets | grouped, none | ratio | ungrouped |")
    print("|---|---:|---:|---:|---:|---:|")
    for mode in MODES:
        eager = statistics.median(times[(True, True, mode)])
        lazy = statistics.median(times[(True, False, mode)])
        flat = statistics.median(times[(False, False, mode)])
        per_answer = sections[mode] / len(QUERIES)
        print(f"| {mode} | {per_answer:.1f} | {eager:.2f} | {lazy:.2f} | {lazy / eager:.2f} | {flat:.2f} |")
    print(f"load average (1 min) {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
