"""Dump every search answer on the shared eval sets, to show that a change kept results identical.

For each shared set (`../shared/eval`: its queries and the off-topic ones), in lexical and hybrid
mode, with and without group-by-file, limit 10, it writes one JSON line per search: the query, the
mode, and per hit (path, start line, end line, score, `more`, both signal ranks). With `--candidates`
it also writes each candidate's unrounded score and lexical confidence (the searcher's private
`_score`, so a change of the fourth decimal shows too).

Run it on the tree before and after a change, against the same stores, and diff the two files:

    PYTHONPATH=/tmp/before/server .venv/bin/python benchmarks/compare_results.py /tmp/before.jsonl
    .venv/bin/python benchmarks/compare_results.py /tmp/after.jsonl
    diff /tmp/before.jsonl /tmp/after.jsonl && echo identical

`kbls` is imported from wherever Python finds it first (PYTHONPATH before the editable install),
so the tree being measured is the one named there. Stores: `benchmarks/.cache/eval/<set>/store`
(built by `bench_engine.py --phase quality`), or `--stores DIR` holding `<set>/kbls.sqlite3`
copies, opened read-only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parent.parent
EVAL_DIR = Path(os.environ.get("KBLS_EVAL_DIR", REPO.parent / "shared" / "eval"))
CACHE = REPO / "benchmarks" / ".cache" / "eval"
SETS = ("rust-by-example", "til")
MODES = ("lexical", "hybrid")
#: candidates per ranking with `--candidates`: what a grouped search of limit 10 asks for.
CANDIDATES = 150


def queries(name: str) -> list[str]:
    from kbls.evaluate import read_queries

    off_topic = [q.strip() for q in (EVAL_DIR / "off-topic-queries.txt").read_text().splitlines() if q.strip()]
    return [q for q, _ in read_queries(EVAL_DIR / f"{name}-queries.tsv")] + off_topic


def dump(out: Path, stores: Path | None, candidates: bool) -> int:
    import kbls
    from kbls.engine import Engine
    from kbls.limits import Mode
    from kbls.query.syntax import parse_query

    print(f"kbls from {Path(kbls.__file__).parent}", file=sys.stderr)
    lines = 0
    with out.open("w", encoding="utf-8") as handle:
        for name in SETS:
            store = (stores / name) if stores else CACHE / name / "store"
            engine = Engine(CACHE / name / "src", store_dir=store, read_only=True)
            try:
                for query in queries(name):
                    for mode in MODES:
                        for grouped in (False, True):
                            hits = engine.search(query, mode=mode, limit=10, group_by_file=grouped).hits
                            record: dict[str, Any] = {
                                "set": name, "query": query, "mode": mode, "grouped": grouped,
                                "hits": [[h.path, h.start_line, h.end_line, h.score, h.more,
                                          h.signals.semantic, h.signals.lexical] for h in hits],
                            }
                            handle.write(json.dumps(record) + "\n")
                            lines += 1
                        if candidates:
                            parsed = parse_query(query)
                            scored = engine.searcher._score(parsed.text, parsed.filters, Mode(mode), CANDIDATES)
                            handle.write(json.dumps({
                                "set": name, "query": query, "mode": mode,
                                "candidates": [[s.row.id, repr(s.score), repr(s.lexical)] for s in scored],
                            }) + "\n")
                            lines += 1
            finally:
                engine.close()
    print(f"{lines} lines written to {out}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the JSON-lines file to write")
    parser.add_argument("--stores", type=Path, help="a folder of <set>/kbls.sqlite3 store copies")
    parser.add_argument("--candidates", action="store_true", help="also every candidate's unrounded scores")
    args = parser.parse_args(argv)
    return dump(args.out, args.stores, args.candidates)


if __name__ == "__main__":
    sys.exit(main())
