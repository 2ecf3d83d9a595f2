"""`kbls index` peak memory and CPU by how chunk texts are batched for the model (issue 12 item 5).

Each mode indexes Rust by Example (`benchmarks/.cache/eval/rust-by-example/src`, fetched by
`bench_engine.py`) into a fresh store in a fresh process and prints peak RSS (ru_maxrss), wall
time and CPU time of the process (all threads; steadier than wall time on a shared machine):

- `grouped` (this tree): length-sorted groups of at most 32 texts and 2,048 padded tokens
  (`grouped4`, `grouped8`: at most 4 or 8 texts, as the daemon's `batch_size`);
- `plain32`, `plain8`: the texts in pipeline order, 32 or 8 per model call (before).

    .venv/bin/python benchmarks/bench_index_memory.py grouped plain32 plain8 grouped plain32
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOT = REPO / "benchmarks" / ".cache" / "eval" / "rust-by-example" / "src"


def one(mode: str) -> str:
    """Index once in this process (a fresh one per mode); one line of figures."""
    import numpy as np

    from kbls.config import ModelConfig
    from kbls.engine import Engine
    from kbls.indexing import embed

    batch = 32
    if mode.startswith("grouped") and mode != "grouped":
        batch = int(mode.removeprefix("grouped"))  # e.g. grouped4: the daemon's 4 texts per call
    if mode.startswith("plain"):
        batch = int(mode.removeprefix("plain"))

        def plain(self: embed.Embedder, texts: list[str]) -> np.ndarray:
            return self._embed([self.passage_text(t) for t in texts])

        embed.Embedder.embed_passages = plain  # type: ignore[method-assign,assignment]
    store = Path(tempfile.mkdtemp(prefix="kbls-index-memory-"))
    os.environ["XDG_CACHE_HOME"] = str(store / "cache")
    model = embed.Embedder(ModelConfig(batch_size=batch))
    model.load()
    engine = Engine(ROOT, store_dir=store / "store", embedder=model)
    started = time.perf_counter()
    report = engine.index()
    seconds = time.perf_counter() - started
    engine.close()
    shutil.rmtree(store, ignore_errors=True)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (
        f"| {mode} | {report.embedded} | {seconds:.1f} | {usage.ru_utime + usage.ru_stime:.1f} | "
        f"{usage.ru_maxrss / 1024:.0f} | {os.getloadavg()[0]:.1f} |"
    )


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(one(sys.argv[2]))
        return 0
    print("| mode | chunks embedded | wall s | CPU s | peak RSS MB | load |")
    print("|---|---:|---:|---:|---:|---:|")
    for mode in sys.argv[1:] or ["grouped", "plain32", "plain8"]:
        out = subprocess.run([sys.executable, __file__, "--one", mode], capture_output=True, text=True, check=True)
        print(out.stdout.strip().splitlines()[-1], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
