"""Save → found by its words, as an editor meets it: the real `kbls serve` over stdio, standalone
and as a relay to the per-user daemon, side by side in one run.

Rust by Example (the shared set, 198 files) is extracted twice, one copy per arm (the per-user
daemon keeps its store open between sessions, as it does for a user), and indexed once by each
arm before the first edit. Each round opens one arm, appends a new paragraph to the longest chapter
(`unsafe/asm.md`, 19,605 characters), sends `textDocument/didSave` and polls `kb/search` for
the paragraph's words until the chapter is a hit by its words; then it waits until the save's
vector is written before the next edit. Arms alternate round by round, so a change of the
machine's load falls on both. `--before SERVER_DIR` adds the same two arms running other code
(a worktree's `server` folder first on PYTHONPATH, with a per-user daemon of its own).

    .venv/bin/python benchmarks/bench_save.py [--rounds 4] [--edits 5] [--before ../old/server]
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
sys.path.insert(0, str(REPO))
from tests.support.raw_stdio import RawStdio  # noqa: E402

EVAL = Path(os.environ.get("KBLS_EVAL_DIR", REPO.parent / "shared" / "eval"))
CHAPTER = "unsafe/asm.md"
ARMS = ("standalone", "relay")


class Session(RawStdio):
    def wait_ready(self, timeout: float = 900) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.request("kb/status", {}, deadline=None)
            if status["state"] == "ready" and status["queue"] == 0 and status["roots"]:
                return
            time.sleep(0.05)
        raise RuntimeError("the server did not become ready")


def edit_and_find(session: Session, root: Path, original: str, tag: str) -> float:
    """ms from didSave of a new paragraph to the first `kb/search` that finds it by its words."""
    note = root / CHAPTER
    words = f"zorbly{tag} quintessent{tag} marmoset{tag}"
    note.write_text(original + f"\n\nA fresh paragraph about the {words}, written by the benchmark.\n")
    started = time.perf_counter()
    session.notify("textDocument/didSave", {"textDocument": {"uri": note.as_uri()}})
    while True:
        hits = session.request("kb/search", {"query": words, "limit": 3}, deadline=None)["hits"]
        if any(h["path"] == CHAPTER and h["signals"]["lexical"] for h in hits):
            return (time.perf_counter() - started) * 1000
        if time.perf_counter() - started > 30:
            raise RuntimeError("the edit was not found within 30 s")
        time.sleep(0.002)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=4, help="sessions per arm, alternating")
    parser.add_argument("--edits", type=int, default=5, help="saves per session")
    parser.add_argument(
        "--before", type=Path, help="the `server` folder of other code (a worktree's): its two arms run in turn with these"
    )
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="kbls-bench-save-"))
    codes = {"now": None} | ({"before": args.before} if args.before else {})
    envs = {}
    for code, server in codes.items():
        # each code its own per-user daemon (runtime folder), the other code's package first on the path
        (tmp / f"run-{code}").mkdir(mode=0o700)
        envs[code] = dict(os.environ, XDG_RUNTIME_DIR=str(tmp / f"run-{code}"), KBLS_DAEMON_IDLE_MINUTES="1")
        if server is not None:
            envs[code]["PYTHONPATH"] = str(server.resolve())
    arms = [f"{kind} {code}" for code in codes for kind in ARMS]
    roots = {}
    for arm in arms:
        folder = tmp / arm.replace(" ", "-")
        with tarfile.open(EVAL / "rust-by-example-src.tgz") as tar:
            tar.extractall(folder, filter="data")
        roots[arm] = folder / "src"
    original = (roots[arms[0]] / CHAPTER).read_text()
    started_load = os.getloadavg()
    times: dict[str, list[float]] = {arm: [] for arm in arms}
    try:
        for r in range(-1, args.rounds):
            for arm in arms if r % 2 == 0 else reversed(arms):
                kind, code = arm.split()
                session = Session(tmp, env=envs[code], name=f"{kind}-{code}-{r}", daemon=kind == "relay")
                root = roots[arm]
                try:
                    session.initialize(root)
                    session.wait_ready()
                    if r < 0:
                        continue  # the first index
                    for e in range(args.edits):
                        times[arm].append(edit_and_find(session, root, original, f"{kind[0]}{code[0]}{r}x{e}"))
                        session.wait_ready()
                finally:
                    session.close()
                print(f"{arm} round {r}: {[round(t, 1) for t in times[arm][-args.edits :]]}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result: dict[str, Any] = {
        "chapter": CHAPTER,
        "chapter_chars": len(original),
        "edits_per_arm": args.rounds * args.edits,
        "load_average": {"start": [round(x, 2) for x in started_load], "end": [round(x, 2) for x in os.getloadavg()]},
    }
    for arm, values in times.items():
        result[arm] = {
            "median_ms": round(statistics.median(values), 1),
            "min_ms": round(min(values), 1),
            "max_ms": round(max(values), 1),
        }
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
