"""Two trees of kbls side by side: `kb/search` round trips of the same workspace, interleaved.

A refactoring or a ranking change must not slow the server beyond noise, and on a machine shared
with other work two runs minutes apart differ by more than that. This benchmark starts one
`kbls serve` of each tree on the same text and sends every query to both, alternating which goes
first, so both meet the same load; it reports each tree's medians and tails and their ratio.

Each tree brings its own venv (`<tree>/.venv`) and builds its own store of the workspace with its
own `benchmarks/bench_daemon.py` (the same Rust by Example copies, random unit vectors for the
chunks; queries are embedded by the real model), so any tree whose bench_daemon has
`build_workspace(chunks)` can be compared.

    .venv/bin/python benchmarks/bench_compare.py --old ../kbls-before            # 1k, 10k, 50k
    .venv/bin/python benchmarks/bench_compare.py --old ../kbls-before --sizes 1000 --rounds 50 --no-doc
    .venv/bin/python benchmarks/bench_compare.py --old ../kbls-before --group-by-file ...   # as VS Code asks

Writes its figures into `docs/benchmarks.md` between `<!-- compare:start -->` and
`<!-- compare:end -->`, leaving every other section alone.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tests.support.raw_stdio import frame, initialize_params, read_message  # noqa: E402

import results_file  # noqa: E402
from bench_daemon import QUERIES  # noqa: E402  (the same queries as the daemon benchmark)
from doc_section import replace_section  # noqa: E402

log = logging.getLogger("bench_compare")

RESULTS = REPO / "benchmarks" / ".cache" / "compare-results.json"
DOC = REPO / "docs" / "benchmarks.md"
START, END = "<!-- compare:start -->", "<!-- compare:end -->"
MODES = ("hybrid", "semantic", "lexical")


def git_head(tree: Path) -> str:
    done = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "?"


def build_workspace(tree: Path, chunks: int) -> Path:
    """The tree's own bench_daemon workspace of about `chunks` chunks (built once, then cached)."""
    code = (
        "import sys, logging; logging.basicConfig(level=logging.INFO); "
        "sys.path.insert(0, 'benchmarks'); import bench_daemon; "
        f"print(bench_daemon.build_workspace({chunks}))"
    )
    python = str(tree / ".venv" / "bin" / "python")
    done = subprocess.run([python, "-c", code], cwd=tree, capture_output=True, text=True, check=True)
    return Path(done.stdout.strip().splitlines()[-1])


class Server:
    """One tree's `kbls serve` (in-process engine, no per-user daemon) with a synchronous client."""

    def __init__(self, tree: Path, root: Path, tmp: Path, name: str) -> None:
        env = dict(os.environ, KBLS_NO_DAEMON="1", XDG_CACHE_HOME=str(tmp / f"{name}-cache"), PYTHONUNBUFFERED="1")
        # The load-ready model copy (kept since issue 12) is built once a machine, not once a run.
        env["KBLS_MODEL_CACHE"] = str(tree / "benchmarks" / ".cache" / "models")
        self.stderr = (tmp / f"{name}.stderr").open("wb")
        self.proc = subprocess.Popen(
            [str(tree / ".venv" / "bin" / "python"), "-m", "kbls", "serve",
             "--log-file", str(tmp / f"{name}.log"), "--log-level", "WARNING"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env, cwd=tree,
        )
        self._in: IO[bytes] = self.proc.stdin  # type: ignore[assignment]  # PIPE was asked for
        self._out: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        self._id = 0
        self.request("initialize", initialize_params(root))
        self._send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def _send(self, message: Any) -> None:
        self._in.write(frame(message))
        self._in.flush()

    def request(self, method: str, params: Any) -> Any:
        self._id += 1
        self._send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        while True:
            message = read_message(self._out)
            if message is None:
                raise RuntimeError(f"the server closed its output (exit {self.proc.poll()})")
            if "method" in message:  # the server's own requests and notifications
                if "id" in message:
                    self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def wait_ready(self, timeout: float = 900) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status: dict[str, Any] = self.request("kb/status", {})
            if status["state"] == "ready" and status["queue"] == 0 and status["roots"]:
                return status
            time.sleep(0.1)
        raise RuntimeError("the server did not become ready")

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self._send({"jsonrpc": "2.0", "method": "exit", "params": None})
            self.proc.wait(30)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(10)
        self.stderr.close()


@dataclass
class Side:
    """One tree's server and the round trips it answered."""

    name: str
    server: Server
    times: dict[str, list[float]]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def compare_size(trees: dict[str, Path], size: int, rounds: int, tmp: Path, grouped: bool = False) -> dict[str, Any]:
    """:param grouped: every request with `groupByFile` (one hit per note, as the editors' pickers ask)."""
    roots = {name: build_workspace(tree, size) for name, tree in trees.items()}
    sides = []
    figures: dict[str, Any] = {}
    for name, tree in trees.items():
        started = time.perf_counter()
        server = Server(tree, roots[name], tmp, f"{name}-{size}")
        status = server.wait_ready()
        root = status["roots"][0]
        figures[name] = {"chunks": root["chunks"], "files": root["files"], "ready_s": round(time.perf_counter() - started, 2)}
        sides.append(Side(name, server, {mode: [] for mode in MODES}))
    try:
        for mode in MODES:  # warm-up: vectors paged in, every query's embedding cached alike
            for query in QUERIES:
                for side in sides:
                    side.server.request("kb/search", {"query": query, "mode": mode, "groupByFile": grouped})
        for i in range(rounds):
            query = QUERIES[i % len(QUERIES)]
            for mode in MODES:
                for side in sides if i % 2 == 0 else reversed(sides):
                    t0 = time.perf_counter()
                    side.server.request("kb/search", {"query": query, "mode": mode, "groupByFile": grouped})
                    side.times[mode].append((time.perf_counter() - t0) * 1000)
        for side in sides:
            for mode in MODES:
                times = side.times[mode]
                figures[side.name][mode] = {"p50_ms": round(statistics.median(times), 2), "p99_ms": round(pct(times, 99), 2)}
            figures[side.name]["rss_mb"] = round(side.server.peak_rss_mb(), 1)
    finally:
        for side in sides:
            side.server.close()
    figures["load_average_1m"] = f"{os.getloadavg()[0]:.1f}"
    log.info("size %d: %s", size, json.dumps(figures))
    return figures


def render(entry: dict[str, Any]) -> str:
    old, new = entry["trees"]["old"], entry["trees"]["new"]
    lines = [
        START,
        "## Before and after, side by side",
        "",
        f"Written by `benchmarks/bench_compare.py`, {entry['date']}, {entry['machine']}. "
        f"Old = commit {old['commit']}, new = commit {new['commit']}: one `kbls serve` of each tree "
        "(in-process engine) on the same Rust by Example copies (random unit vectors for the chunks, queries "
        f"embedded by the real model), {entry['rounds']} `kb/search` round trips per mode, each query sent to both "
        "servers in turn, alternating which goes first, after one warm-up pass of every query (a tree with a "
        "query-embedding cache answers the timed rounds from it; one without embeds each query again). "
        "Ready after start: process start to the first scan done, the model copy of a tree that prepares one "
        "already built. "
        "Ratio = new / old of the medians (below 1: new is faster). The last column is the 1-minute load "
        "average at the end of each size (the machine is shared; both servers met the same load).",
        "",
        "| chunks (old / new) | mode | old p50 / p99 ms | new p50 / p99 ms | p50 ratio "
        "| ready after start old / new | peak RSS old / new | load |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for figures in entry["sizes"].values():
        o, n = figures["old"], figures["new"]
        for mode in MODES:
            ratio = n[mode]["p50_ms"] / o[mode]["p50_ms"] if o[mode]["p50_ms"] else float("nan")
            lines.append(
                f"| {o['chunks']:,} / {n['chunks']:,} | {mode} | {o[mode]['p50_ms']} / {o[mode]['p99_ms']} | "
                f"{n[mode]['p50_ms']} / {n[mode]['p99_ms']} | {ratio:.2f} | {o['ready_s']} / {n['ready_s']} s | "
                f"{o['rss_mb']:.0f} / {n['rss_mb']:.0f} MB | {figures['load_average_1m']} |"
            )
    lines += ["", END]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="the other tree (with its own .venv)")
    parser.add_argument("--new", type=Path, default=REPO)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    parser.add_argument("--rounds", type=int, default=200, help="kb/search requests per mode and size, per tree")
    parser.add_argument("--group-by-file", action="store_true", help="every kb/search with groupByFile")
    parser.add_argument("--doc-only", action="store_true", help="rewrite the doc from the saved results")
    parser.add_argument(
        "--no-doc", action="store_true",
        help="a trial run: print the table, leave docs/benchmarks.md and the saved results alone",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if not args.doc_only:
        trees = {"old": args.old.resolve(), "new": args.new.resolve()}
        tmp = Path(tempfile.mkdtemp(prefix="kbls-compare-"))
        entry = {
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{os.cpu_count()} CPUs ({platform.machine()}), Python {platform.python_version()}",
            "rounds": args.rounds,
            "trees": {name: {"commit": git_head(tree)} for name, tree in trees.items()},
            "sizes": {str(size): compare_size(trees, size, args.rounds, tmp, args.group_by_file) for size in args.sizes},
        }
        if args.no_doc:
            print(render(entry))
            return 0
        results_file.save(RESULTS, "search", entry)
    entry = results_file.load(RESULTS)["search"]
    replace_section(DOC, START, END, render(entry))
    print(render(entry))
    return 0


if __name__ == "__main__":
    sys.exit(main())
