"""First index in the daemon, as an editor meets it: `kb/search` while `kbls serve` indexes a
fresh store (lexical pass, then the embedding pass), against the same searches once it is idle.

A copy of a shared set (Rust by Example by default) is opened by a real `kbls serve` over stdio
with an empty store and the real model. From `initialized` on, the client sends a hybrid
`kb/search` every `--gap` seconds (the 20 queries in turn) and times each round trip; it notes
when the lexical pass ended (the first `kb/indexStatus` with nothing pending and chunks waiting)
and when everything was embedded (`ready`). Then the same number of searches on the idle daemon.
Prints one JSON object: p50/p99 of both phases, their ratio, the two moments, load averages.

    .venv/bin/python benchmarks/bench_first_index.py [--set rust-by-example] [--files 80] [--gap 0.2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(REPO))
from tests.support.raw_stdio import RawStdio  # noqa: E402

EVAL = Path(os.environ.get("KBLS_EVAL_DIR", REPO.parent / "shared" / "eval"))
from bench_daemon import QUERIES  # noqa: E402  (the daemon benchmark's queries: one list)


class Watching(RawStdio):
    """A `kbls serve` whose `kb/indexStatus` notifications are kept with the time they came."""

    statuses: list[tuple[float, dict[str, Any]]]

    def read(self) -> dict[str, Any]:
        message = super().read()
        if message.get("method") == "kb/indexStatus":
            self.statuses.append((time.perf_counter(), message["params"]))
        return message


def unpack(name: str, into: Path, files: int | None) -> Path:
    """The set's notes; with `files`, only that many of its markdown files (by path)."""
    root = into / "notes"
    with tarfile.open(EVAL / f"{name}-src.tgz") as tar:
        tar.extractall(root, filter="data")
    if files is not None:
        for extra in sorted(root.rglob("*.md"))[files:]:
            extra.unlink()
    return root


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def summary(times: list[float]) -> dict[str, float]:
    return {"n": len(times), "p50_ms": round(statistics.median(times), 1), "p99_ms": round(pct(times, 99), 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="rust-by-example")
    parser.add_argument("--gap", type=float, default=0.2, help="seconds between searches")
    parser.add_argument("--files", type=int, default=None, help="only this many of the set's markdown files")
    parser.add_argument("--idle", type=int, default=150, help="searches once idle")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="kbls-first-index-"))
    try:
        root = unpack(args.set, tmp, args.files)
        (root / ".kbls.yaml").write_text(f"store: {tmp / 'store'}\n", encoding="utf-8")
        server = Watching(tmp, env=dict(os.environ))
        server.statuses = []
        started = time.perf_counter()
        server.initialize(root)
        during: list[float] = []
        lexical_done = embedded_done = None
        states: list[str] = []
        i = 0
        while embedded_done is None:
            query = QUERIES[i % len(QUERIES)]
            i += 1
            sent = time.perf_counter()
            result = server.request("kb/search", {"query": query, "limit": 10}, deadline=120)
            took = (time.perf_counter() - sent) * 1000
            state = result["index"]["state"]
            states.append(state)
            if state != "loading":  # the model loads first; a search then is lexical and cheap
                during.append(took)
            for at, status in server.statuses:
                if lexical_done is None and status["pending"] == 0 and status.get("waiting", 0) > 0:
                    lexical_done = at - started
                if status["state"] == "ready" and status.get("waiting", 0) == 0 and status["chunks"]:
                    embedded_done = at - started
            time.sleep(args.gap)
        idle: list[float] = []
        print(f"first index done: {len(during)} searches, lexical {lexical_done}, embedded {embedded_done}", file=sys.stderr)
        for j in range(args.idle):
            sent = time.perf_counter()
            server.request("kb/search", {"query": QUERIES[j % len(QUERIES)], "limit": 10}, deadline=120)
            idle.append((time.perf_counter() - sent) * 1000)
            time.sleep(args.gap)
        last = server.statuses[-1][1]
        server.close()
        out = {
            "set": args.set, "files": last["files"], "chunks": last["chunks"],
            "lexical_pass_done_s": None if lexical_done is None else round(lexical_done, 1),
            "all_embedded_s": round(embedded_done, 1),
            "during_first_index": summary(during), "idle": summary(idle),
            "p99_ratio": round(pct(during, 99) / pct(idle, 99), 2),
            "p50_ratio": round(statistics.median(during) / statistics.median(idle), 2),
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
            "cpus": os.cpu_count(),
        }
        print(json.dumps(out, indent=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
