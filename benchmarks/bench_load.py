"""Load benchmark (issue 6): `kb/search` latency with 8 requests in flight, idle and while indexing.

One real `kbls serve` over stdio (pygls client in this process; latency = request sent ->
result parsed). Phases:

1. idle: index `--notes` notes, wait until ready, send `--requests` searches, `--inflight` at
   a time;
2. indexing: drop `--new-notes` more notes into the root (the watcher queues them), wait until
   the daemon reports `indexing`, and send the same load again.

Pass: zero errors in both phases and p99 while indexing within 3x the idle p99. The figures go
into `docs/benchmarks.md` between `<!-- load:start -->` and `<!-- load:end -->` (under `## Load`),
leaving the other sections alone; `--no-write` keeps the doc as it is (the tests use `run()`).

    .venv/bin/python benchmarks/bench_load.py              # 2,000 requests per phase
    .venv/bin/python benchmarks/bench_load.py --requests 200 --no-write
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tests.support.corpus import make_corpus, note_text, write_config  # noqa: E402
from tests.support.lsp_client import LspSession  # noqa: E402

from doc_section import replace_section  # noqa: E402

DOC = REPO / "docs" / "benchmarks.md"
START, END = "<!-- load:start -->", "<!-- load:end -->"
QUERIES = [
    "who owns a value after it is moved", "garden tomato basil", "train museum travel", "kernel socket cache",
    "bread flour yeast oven", "river mountain coffee", "budget plan meeting", "vector search index",
    "rust memory lifetime", "python recipe", "unique12x0", "alpha beta gamma delta",
]


@dataclass
class Phase:
    name: str
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: requests answered while the daemon still reported `indexing` (phase 2 only)
    during_indexing: int = 0

    def pct(self, q: float) -> float:
        data = sorted(self.latencies_ms)
        if not data:
            return float("nan")
        return data[min(len(data) - 1, int(round(q / 100 * (len(data) - 1))))]

    @property
    def throughput(self) -> float:
        return len(self.latencies_ms) / self.seconds if self.seconds else 0.0


def load(daemon: LspSession, phase: Phase, requests: int, inflight: int, watch_indexing: bool = False) -> Phase:
    """Send `requests` kb/search, keeping `inflight` outstanding; record each latency or error."""
    sent = 0
    pending: dict[concurrent.futures.Future, float] = {}
    started = time.perf_counter()
    last_state_check = 0.0
    indexing = watch_indexing
    while sent < requests or pending:
        while sent < requests and len(pending) < inflight:
            query = QUERIES[sent % len(QUERIES)]
            pending[daemon.send("kb/search", {"query": query, "limit": 10})] = time.perf_counter()
            sent += 1
        done, _ = concurrent.futures.wait(list(pending), timeout=60, return_when=concurrent.futures.FIRST_COMPLETED)
        if not done:
            phase.errors.append("no answer within 60 s")
            break
        now = time.perf_counter()
        for future in done:
            began = pending.pop(future)
            try:
                result = future.result()
                phase.latencies_ms.append((now - began) * 1000)
                if indexing and result.get("index", {}).get("state") == "indexing":
                    phase.during_indexing += 1
            except Exception as exc:  # every failure counts
                phase.errors.append(f"{type(exc).__name__}: {exc}")
        if watch_indexing and now - last_state_check > 1.0:
            last_state_check = now
    phase.seconds = time.perf_counter() - started
    return phase


def run(requests: int = 2000, inflight: int = 8, notes: int = 300, new_notes: int = 600, tmp: Path | None = None) -> dict:
    """Both phases against one daemon; returns the figures (see `format_section`)."""
    owned = tmp is None
    workdir = Path(tempfile.mkdtemp(prefix="kbls-load-")) if owned else tmp
    root = workdir / "notes"
    make_corpus(root, notes)
    write_config(root, store=str(workdir / "store"))
    # as an editor runs it: INFO log, no progress capability (the figures in docs/benchmarks.md)
    daemon = LspSession([root], workdir, name="load", progress=False, log_level="INFO")
    try:
        daemon.wait_ready(timeout=1800)
        load(daemon, Phase("warm-up"), 50, inflight)
        idle = load(daemon, Phase("idle"), requests, inflight)
        import random

        rng = random.Random(3)
        (root / "incoming").mkdir()
        for i in range(new_notes):
            (root / "incoming" / f"new-{i:04d}.md").write_text(note_text(100_000 + i, rng))
        daemon.wait_for(lambda: daemon.status().state == "indexing", 60, "indexing to start")
        busy = load(daemon, Phase("indexing"), requests, inflight, watch_indexing=True)
        still_indexing = daemon.status().state == "indexing"
        status = daemon.status()
    finally:
        daemon.close()
    return {
        "requests": requests, "inflight": inflight, "notes": notes, "new_notes": new_notes,
        "idle": idle, "indexing": busy, "still_indexing_at_end": still_indexing,
        "files_at_end": status.roots[0].files if status.roots else 0,
        "ratio_p99": busy.pct(99) / idle.pct(99) if idle.latencies_ms else float("inf"),
    }


def format_section(figures: dict) -> str:
    idle, busy = figures["idle"], figures["indexing"]
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cpus = os.cpu_count()
    rows = []
    for phase in (idle, busy):
        rows.append(
            f"| {phase.name} | {len(phase.latencies_ms)} | {len(phase.errors)} | {phase.pct(50):.1f} | "
            f"{phase.pct(95):.1f} | {phase.pct(99):.1f} | {max(phase.latencies_ms, default=0):.1f} | "
            f"{phase.throughput:.0f} |"
        )
    ok = not idle.errors and not busy.errors and figures["ratio_p99"] <= 3.0
    return "\n".join([
        START,
        "## Load",
        "",
        f"Written by `benchmarks/bench_load.py`, {when}, {cpus} CPUs ({platform.machine()}), Python "
        f"{platform.python_version()}. One `kbls serve` over stdio; {figures['requests']} `kb/search` "
        f"(hybrid, limit 10) per phase, {figures['inflight']} in flight; latency = request sent -> result "
        f"parsed by the client. Idle: {figures['notes']} notes indexed. Indexing: {figures['new_notes']} "
        f"new notes dropped in just before the load ({busy.during_indexing} of the answers said "
        f"`indexing`; still indexing at the end: {'yes' if figures['still_indexing_at_end'] else 'no'}).",
        "",
        "| phase | answered | errors | p50 ms | p95 ms | p99 ms | max ms | req/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"p99 while indexing / idle p99 = **{figures['ratio_p99']:.2f}** (target <= 3); "
        f"errors: {len(idle.errors) + len(busy.errors)} (target 0). {'Pass.' if ok else 'FAIL.'}",
        "",
        END,
    ])


def write_doc(section: str) -> None:
    replace_section(DOC, START, END, section)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--inflight", type=int, default=8)
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--new-notes", type=int, default=600)
    parser.add_argument("--no-write", action="store_true", help="print, do not update docs/benchmarks.md")
    args = parser.parse_args()
    figures = run(args.requests, args.inflight, args.notes, args.new_notes)
    section = format_section(figures)
    print(section)
    if not args.no_write:
        write_doc(section)
    idle, busy = figures["idle"], figures["indexing"]
    return 0 if not idle.errors and not busy.errors and figures["ratio_p99"] <= 3.0 else 1


if __name__ == "__main__":
    sys.exit(main())
