"""CPU time per `Engine.search` with today's snippets and sections against an older snippet.

One process, one engine, one store (bench_daemon's 1,000-chunk Rust by Example copies, built by
`bench_daemon.build_workspace`): the older tree's `retrieval/snippet.py` (read with `git show`,
its `make_snippet(body, query_terms)`, no `Hit.sections`) and today's are swapped in turn, so both
meet the same load. Prints the median CPU ms per query of each, ungrouped and grouped, per mode.

    KBLS_EVAL_DIR=/work/shared/eval .venv/bin/python benchmarks/bench_snippets.py --old 7f5eb54
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
import kbls.retrieval.hybrid as hybrid  # noqa: E402
from bench_daemon import QUERIES, build_workspace  # noqa: E402
from kbls.engine import Engine  # noqa: E402
from kbls.query.syntax import query_terms  # noqa: E402

MODES = ("hybrid", "semantic", "lexical")


def old_snippet(rev: str) -> ModuleType:
    """The snippet module of `rev`, loaded beside today's."""
    text = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:server/kbls/retrieval/snippet.py"], capture_output=True, text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "old_snippet.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_snippet", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="the commit whose snippet.py is the reference")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    old = old_snippet(args.old)
    new = (hybrid.make_snippet, hybrid.snippet_terms, hybrid.MAX_SECTIONS)
    root = build_workspace(1000)
    engine = Engine(root, store_dir=root.parent / f"{root.name}-store", read_only=True)

    def use(which: str) -> None:
        if which == "before":
            hybrid.make_snippet, hybrid.snippet_terms, hybrid.MAX_SECTIONS = old.make_snippet, query_terms, 0  # type: ignore[assignment]
        else:
            hybrid.make_snippet, hybrid.snippet_terms, hybrid.MAX_SECTIONS = new

    times: dict[tuple[bool, str, str], list[float]] = {}
    for grouped in (False, True):
        for round_ in range(args.rounds):
            for which in ("before", "after") if round_ % 2 == 0 else ("after", "before"):
                use(which)
                for mode in MODES:
                    # "after" as measured in docs/benchmarks.md: every section with its snippet
                    eager = which == "after"
                    for query in QUERIES[:3]:  # warm-up
                        engine.search(query, mode=mode, group_by_file=grouped, section_snippets=eager)
                    started = time.process_time()
                    for query in QUERIES:
                        engine.search(query, mode=mode, group_by_file=grouped, section_snippets=eager)
                    spent = (time.process_time() - started) / len(QUERIES) * 1000
                    times.setdefault((grouped, which, mode), []).append(spent)
    for grouped in (False, True):
        for mode in MODES:
            before = statistics.median(times[(grouped, "before", mode)])
            after = statistics.median(times[(grouped, "after", mode)])
            label = "grouped" if grouped else "ungrouped"
            print(f"{label} {mode}: CPU ms/query before {before:.2f}, after {after:.2f}, ratio {after / before:.2f}")
    print(f"load average (1 min) {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
