"""CPU time per query of `Engine.search` on a shared eval set's store, for comparing code trees.

Runs the set's queries (5 first as a warm-up, then all of them `--repeats` times), grouped by
file, limit 10, in each mode asked for, and prints one line per mode: the process's CPU time per
query (`time.process_time`, the steadier figure on a shared machine), the wall-clock median, and
the 1-minute load average. `kbls` is imported from wherever Python finds it first, so the tree
measured is the one on PYTHONPATH (or this venv's editable install); trees as old as 9a7cbbe
(no read-only stores yet) work too. Run the trees in turn in separate processes, several rounds:

    for i in 1 2 3; do
      PYTHONPATH=/tmp/before/server .venv/bin/python benchmarks/bench_query_cpu.py --label before
      .venv/bin/python benchmarks/bench_query_cpu.py --label now
    done

The store is `benchmarks/.cache/eval/<set>/store` (built by `bench_engine.py --phase quality`)
unless `--store` names a copy; a tree that may write to it (an old one) should get a copy.

`--typed` sends each query as typed, once at every length from 3 characters (search-as-you-type);
`--forget` makes the engine forget before every search what it remembers of the store (the
document counts, `fts.DocCounts`; query words, their holders and rows, `retrieval.remembered`),
so every search costs what a query never seen before costs (trees without them: no effect).
"""

from __future__ import annotations

import argparse
import inspect
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parent.parent
EVAL_DIR = Path(os.environ.get("KBLS_EVAL_DIR", REPO.parent / "shared" / "eval"))
CACHE = REPO / "benchmarks" / ".cache" / "eval"
WARM_UP = 5


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="til", help="shared eval set (default: til)")
    parser.add_argument("--store", type=Path, help="store folder (default: the set's in benchmarks/.cache/eval)")
    parser.add_argument("--modes", default="lexical", help="comma-separated modes (default: lexical)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label", default="", help="printed first on each line")
    parser.add_argument("--typed", action="store_true", help="every query at every length from 3 characters")
    parser.add_argument("--forget", action="store_true", help="forget what the engine remembers before each search")
    args = parser.parse_args(argv)

    import kbls
    from kbls.engine import Engine
    from kbls.evaluate import read_queries

    # Trees before the read-only store (b23929c) open it for writing; give those a copy.
    read_only: dict[str, Any] = {"read_only": True} if "read_only" in inspect.signature(Engine.__init__).parameters else {}
    store = args.store or CACHE / args.set / "store"
    engine = Engine(CACHE / args.set / "src", store_dir=store, **read_only)
    queries = [q for q, _ in read_queries(EVAL_DIR / f"{args.set}-queries.tsv")]
    if args.typed:
        queries = [q[:end] for q in queries for end in range(3, len(q) + 1)]
    kind = (" typed" if args.typed else "") + (" forgetting" if args.forget else "")
    try:
        for mode in args.modes.split(","):
            for query in queries[:WARM_UP]:
                engine.search(query, mode=mode, limit=10, group_by_file=True)
            walls = []
            started = time.process_time()
            for _ in range(args.repeats):
                for query in queries:
                    if args.forget:
                        forget(engine)
                    wall = time.perf_counter()
                    engine.search(query, mode=mode, limit=10, group_by_file=True)
                    walls.append((time.perf_counter() - wall) * 1000)
            cpu = (time.process_time() - started) / len(walls) * 1000
            print(
                f"{args.label} {args.set} {mode}{kind}: cpu {cpu:.2f} ms/query, wall median {statistics.median(walls):.2f} ms, "
                f"load {os.getloadavg()[0]:.1f} ({Path(kbls.__file__).parent})",
                flush=True,
            )
    finally:
        engine.close()
    return 0


def forget(engine: Any) -> None:
    """Drop what `engine` remembers of its store between searches, where its tree has it (the
    attributes are looked up by name: older trees lack them)."""
    counts = getattr(getattr(engine, "store", None), "_doc_count_cache", None)
    if counts is not None:  # (its watching connection is kept: one a search would run out of files)
        counts._docs, counts._chunks = {}, None
    lexical = getattr(getattr(engine, "searcher", None), "lexical", None)
    if lexical is not None and hasattr(lexical, "_remembered"):
        lexical._remembered = None


if __name__ == "__main__":
    sys.exit(main())
