"""The naive baseline's (../shared/eval/naive_baseline.py) ranked files for every query, per mode,
as JSON, so that the ranking lab (`rank_lab.py --against`) can set kbls's per-query losses beside
it. The baseline's own code is run unchanged up to its scoring loop (it is a yardstick to run,
not code to copy); only that loop is replaced by one that records each query's ranking.

Usage: nice -n 19 .venv/bin/python benchmarks/baseline_per_query.py SET OUT.json [--eval DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set")
    parser.add_argument("out", type=Path)
    parser.add_argument("--eval", type=Path, default=REPO.parent.parent / "shared" / "eval")
    args = parser.parse_args()
    eval_dir = args.eval if args.eval.exists() else Path("/work/shared/eval")
    script = eval_dir / "naive_baseline.py"
    source = script.read_text()
    setup = source[: source.index("rows = [")]  # everything before its scoring loop
    sys.argv = [str(script), str(eval_dir / f"{args.set}-src.tgz"), str(eval_dir / f"{args.set}-queries.tsv")]
    scope: dict[str, object] = {"__file__": str(script), "__name__": "baseline"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(setup, str(script), "exec"), scope)  # the shared yardstick, run as is
    chunks = scope["chunks"]
    lines = (eval_dir / f"{args.set}-queries.tsv").read_text().splitlines()[1:]
    rows = [line.split("\t") for line in lines if line.strip()]
    out: dict[str, list[dict[str, object]]] = {}
    for mode in ("lexical", "semantic", "hybrid"):
        fn = scope[{"lexical": "lex", "semantic": "sem", "hybrid": "hyb"}[mode]]
        listed = []
        for query, rel in rows:
            relevant = [r for r in rel.split("|") if r]
            ranked: list[str] = []
            for i in fn(query):
                path = chunks[i][0]
                if path not in ranked:
                    ranked.append(path)
            ranked = ranked[:10]
            dcg = sum(1 / math.log2(i + 2) for i, p in enumerate(ranked) if p in relevant)
            ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
            listed.append({"query": query, "ndcg": dcg / ideal, "ranked": ranked, "relevant": relevant})
        out[mode] = listed
        print(mode, f"{sum(q['ndcg'] for q in listed) / len(listed):.3f}", file=sys.stderr)
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
