"""Memory of N editor windows (issue 12): N standalone `kbls serve` vs N relays on one per-user daemon.

Each window is a real pygls client over stdio (`LspSession`) on the same indexed root (`--notes`
generated notes), as N VS Code windows or a VS Code and a Neovim on the same notes. After every
window is ready and has searched, the resident memory (VmRSS) and peak (VmHWM) of every kbls
process is read from /proc: the N servers, or the N relays and the one daemon. The figures are
printed as a markdown table for `docs/benchmarks.md` (section "Per-user daemon"), with the wall
time of `kbls search --json` while the daemon has the root open, and alone.

    .venv/bin/python benchmarks/bench_windows.py --windows 4
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tests.support.corpus import make_corpus, write_config  # noqa: E402
from tests.support.lsp_client import LspSession  # noqa: E402
from tests.support.processes import KBLS  # noqa: E402

CLI_RUNS = 5


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of `pid` in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", 0.0), fields.get("VmHWM", 0.0)


def daemon_pid(runtime: Path) -> int | None:
    for pid_file in (runtime / "kbls").glob("daemon-*.pid"):
        text = pid_file.read_text().strip()
        if text.isdigit():
            return int(text)
    return None


def measure(windows: int, notes: int, shared: bool) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="kbls-windows-"))
    runtime = Path(tempfile.mkdtemp(prefix="kbls-rt-", dir="/tmp"))
    root = work / "notes"
    make_corpus(root, notes)
    write_config(root, store=str(work / "store"))
    env = {k: v for k, v in os.environ.items() if k != "KBLS_NO_DAEMON"}
    env.update(XDG_RUNTIME_DIR=str(runtime), KBLS_DAEMON_IDLE_MINUTES="0.05")
    sessions = []
    try:
        for i in range(windows):
            session = LspSession([root], work, name=f"w{i}", progress=False, log_level="INFO", env=env, daemon=shared)
            sessions.append(session)
            session.wait_ready(timeout=1800)
            assert session.search("budget plan meeting").hits
        front = [memory_mb(s.process.pid) for s in sessions if s.process is not None]
        figures = {"front_rss": sum(r for r, _ in front), "front_peak": max(h for _, h in front)}
        pid = daemon_pid(runtime) if shared else None
        daemon = memory_mb(pid) if pid else (0.0, 0.0)
        figures.update(daemon_rss=daemon[0], daemon_peak=daemon[1], total_rss=figures["front_rss"] + daemon[0])
        if shared:  # the CLI while the daemon has the root open, and alone
            cli_env = {**env, "XDG_CACHE_HOME": str(work / "xdg-cache")}
            warm: list[float] = []
            alone: list[float] = []
            for _ in range(CLI_RUNS):
                for times, extra in ((warm, {}), (alone, {"KBLS_NO_DAEMON": "1"})):
                    started = time.perf_counter()
                    subprocess.run([str(KBLS), "search", "budget plan meeting", "--json"], cwd=root,
                                   env={**cli_env, **extra}, capture_output=True, check=True)
                    times.append(time.perf_counter() - started)
            figures.update(cli_warm=statistics.median(warm), cli_alone=statistics.median(alone))
        return figures
    finally:
        for session in sessions:
            session.close()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(runtime, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--windows", type=int, default=4)
    parser.add_argument("--notes", type=int, default=300)
    args = parser.parse_args()
    alone = measure(args.windows, args.notes, shared=False)
    shared = measure(args.windows, args.notes, shared=True)
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    n = args.windows
    print(f"`benchmarks/bench_windows.py --windows {n} --notes {args.notes}`, {when}, commit {commit.stdout.strip()}, "
          f"load average {os.getloadavg()[0]:.1f}.\n")
    print("| setup | per window (RSS) | daemon RSS / peak | all kbls processes (RSS) |")
    print("|---|---:|---:|---:|")
    print(f"| {n} × `kbls serve --standalone` | {alone['front_rss'] / n:.0f} MB (peak {alone['front_peak']:.0f}) | - | "
          f"{alone['total_rss']:.0f} MB |")
    print(f"| {n} relays + 1 `kbls daemon` | {shared['front_rss'] / n:.0f} MB (peak {shared['front_peak']:.0f}) | "
          f"{shared['daemon_rss']:.0f} / {shared['daemon_peak']:.0f} MB | {shared['total_rss']:.0f} MB |")
    print(f"\n`kbls search --json`, whole process, median of {CLI_RUNS} interleaved runs: with the daemon "
          f"{shared['cli_warm']:.2f} s, alone (`KBLS_NO_DAEMON=1`) {shared['cli_alone']:.2f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
