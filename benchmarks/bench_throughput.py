"""`kbls index` from scratch against bare fastembed on the same chunk texts, side by side in one
process (the same model object, batch size and threads), so machine load falls on both alike.

Bare fastembed gets every text the index embedded, passage prefix included, sorted by length
(so padding is not what is compared) in batches of `model.batch_size`. The index is a full
`Engine.index()` into a fresh store: scan, read, parse, chunk (exact token counts), the lexical
pass's writes, then the embedding pass (pending texts read in order, length-sorted model calls,
vectors written). Where the index's time goes is measured in the same run: the lexical pass
(until the first embedding progress event), the model calls (`Embedder.embed_passages`, its
tokenizer included), and the rest of the embedding pass (reading pending texts, writing
vectors). Repeats alternate which side goes first. Prints one JSON object.

    .venv/bin/python benchmarks/bench_throughput.py [--set rust-by-example] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "server"))

from kbls.engine import Engine  # noqa: E402
from kbls.indexing.embed import Embedder  # noqa: E402
from kbls.indexing.progress import IndexProgress  # noqa: E402

EVAL = Path(os.environ.get("KBLS_EVAL_DIR", REPO.parent / "shared" / "eval"))


def unpack(name: str, into: Path) -> Path:
    root = into / "notes"
    with tarfile.open(EVAL / f"{name}-src.tgz") as tar:
        tar.extractall(root, filter="data")
    return root


def kbls_index(root: Path, store: Path, embedder: Embedder) -> dict[str, Any]:
    engine = Engine(root, store_dir=store, embedder=embedder)
    texts: list[str] = []
    model_s = 0.0
    original = engine.embedder.embed_passages

    def timed(batch: list[str]) -> np.ndarray:
        nonlocal model_s
        texts.extend(batch)
        started = time.perf_counter()
        try:
            return original(batch)
        finally:
            model_s += time.perf_counter() - started

    lexical_done: float | None = None

    def progress(p: IndexProgress) -> None:
        nonlocal lexical_done
        if p.embedding and lexical_done is None:
            lexical_done = time.perf_counter()

    engine.embedder.embed_passages = timed  # type: ignore[method-assign]  # this engine only
    try:
        started, cpu = time.perf_counter(), time.process_time()
        report = engine.index(progress=progress)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    finally:
        del engine.embedder.embed_passages
        engine.close()
    lexical = (lexical_done or started) - started
    return {
        "seconds": wall, "cpu_seconds": cpu, "chunks": report.embedded, "texts": texts,
        "lexical_pass_s": lexical, "model_s": model_s, "embedding_pass_other_s": wall - lexical - model_s,
    }


def bare(texts: list[str], embedder: Embedder) -> dict[str, Any]:
    model = embedder._model
    assert model is not None
    ordered = sorted((embedder.passage_text(t) for t in texts), key=len)
    started, cpu = time.perf_counter(), time.process_time()
    for _ in model.embed(ordered, batch_size=embedder.config.batch_size):
        pass
    return {"seconds": time.perf_counter() - started, "cpu_seconds": time.process_time() - cpu}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="rust-by-example")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    load_start = os.getloadavg()
    embedder = Embedder()
    embedder.load()
    assert embedder._model is not None
    for _ in embedder._model.embed(["warm up"] * embedder.config.batch_size, batch_size=embedder.config.batch_size):
        pass
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="kbls-throughput-") as tmp:
        root = unpack(args.set, Path(tmp))
        texts: list[str] | None = None
        for i in range(args.repeats):
            if i % 2 == 1 and texts is not None:
                raw = bare(texts, embedder)
                index = kbls_index(root, Path(tmp) / f"store-{i}", embedder)
            else:
                index = kbls_index(root, Path(tmp) / f"store-{i}", embedder)
                raw = bare(index["texts"], embedder)
            texts = index.pop("texts")
            runs.append({"kbls": index, "bare": raw})
            print(f"repeat {i + 1}: kbls {index['seconds']:.1f}s, bare {raw['seconds']:.1f}s", file=sys.stderr, flush=True)
    chunks = runs[0]["kbls"]["chunks"]
    ratios = [r["bare"]["seconds"] / r["kbls"]["seconds"] for r in runs]
    kbls_s = statistics.median(r["kbls"]["seconds"] for r in runs)
    bare_s = statistics.median(r["bare"]["seconds"] for r in runs)

    def median_of(key: str) -> float:
        return round(statistics.median(r["kbls"][key] for r in runs), 2)

    out = {
        "set": args.set, "chunks": chunks, "repeats": args.repeats, "batch_size": embedder.config.batch_size,
        "threads": embedder.config.threads,
        "kbls_chunks_per_s": round(chunks / kbls_s, 1), "bare_chunks_per_s": round(chunks / bare_s, 1),
        "share_of_bare": round(statistics.median(ratios), 3), "paired_shares": [round(r, 3) for r in ratios],
        "cpu_share_of_bare": round(
            statistics.median(r["bare"]["cpu_seconds"] / r["kbls"]["cpu_seconds"] for r in runs), 3
        ),
        "kbls_breakdown_s": {
            "total": round(kbls_s, 2), "lexical_pass": median_of("lexical_pass_s"), "model_calls": median_of("model_s"),
            "embedding_pass_other": median_of("embedding_pass_other_s"),
        },
        "bare_s": round(bare_s, 2), "runs": runs,
        "load_average": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in os.getloadavg()]},
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
