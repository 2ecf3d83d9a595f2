"""Engine benchmark: retrieval quality, index throughput against the raw model, re-index time.

Writes its figures into `docs/benchmarks.md` between `<!-- engine:start -->` and
`<!-- engine:end -->` (under `## Engine`), leaving every other section alone.

Phases (all by default; pick some with `--phase`):

- `quality`: unpack the shared eval set (Rust by Example), index it, and report nDCG@10, MRR@10
  and Recall@10 of the three search modes.
- `throughput`: index the same corpus into a fresh store and, in the same run and process, give
  exactly the chunk texts the pipeline embedded to the same fastembed model object (same batch
  size, same threads). Repeated, interleaved; medians are reported with the overhead ratio.
- `rustweb`: Debian's `rust-web-src` (3,280 markdown files), downloaded with
  `apt-get download` into `benchmarks/.cache/`. The first full index is slow (tens of minutes on
  two cores), so its store is kept there; the figure is the time of an unchanged re-index.

Results of each phase are kept in `benchmarks/.cache/engine-results.json`, so a phase run later
(e.g. the long `rustweb` one, in the background) updates the doc without re-running the others.

    .venv/bin/python benchmarks/bench_engine.py                   # everything
    .venv/bin/python benchmarks/bench_engine.py --phase rustweb   # just the re-index figure
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
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import results_file  # noqa: E402
from doc_section import replace_section  # noqa: E402
from kbls.config import Config, ModelConfig  # noqa: E402
from kbls.engine import Engine  # noqa: E402
from kbls.errors import StoreError  # noqa: E402
from kbls.evaluate import evaluate  # noqa: E402
from kbls.indexing.embed import Embedder  # noqa: E402
from kbls.limits import MODES  # noqa: E402
from kbls.storage.store import STORE_FILE, Store  # noqa: E402

log = logging.getLogger("bench_engine")

EVAL_DIR = Path(os.environ.get("KBLS_EVAL_DIR", REPO.parent / "shared" / "eval"))
CACHE = REPO / "benchmarks" / ".cache"
RESULTS = CACHE / "engine-results.json"
DOC = REPO / "docs" / "benchmarks.md"
START, END = "<!-- engine:start -->", "<!-- engine:end -->"
RUST_WEB_PACKAGE = "rust-web-src"


# -- machine and results ---------------------------------------------------------------------
def machine() -> dict[str, str]:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "?"
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"nproc": str(os.cpu_count()), "cpu": cpu, "python": platform.python_version(), "load": load,
            "commit": commit}


def where(m: dict) -> str:
    """`2 × AMD EPYC, load 7.2`: the load average says how busy the machine was with other work."""
    text = f"{m['nproc']} × {m['cpu']}"
    if m.get("load"):
        text += f", 1-min load average {m['load']} at the end"
    if m.get("commit"):
        text += f", commit {m['commit']}"
    return text


def load_results() -> dict:
    return results_file.load(RESULTS)


def save_results(phase: str, figures: dict) -> None:
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    results_file.save(RESULTS, phase, {**figures, "date": date, "machine": machine()})


def unpack_eval(into: Path) -> Path:
    with tarfile.open(EVAL_DIR / "rust-by-example-src.tgz") as tar:
        tar.extractall(into, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(into)
    return into / "src"


# -- phases ----------------------------------------------------------------------------------
def phase_quality(embedder: Embedder) -> dict:
    with tempfile.TemporaryDirectory(prefix="kbls-bench-") as tmp:
        root = unpack_eval(Path(tmp))
        engine = Engine(root, store_dir=Path(tmp) / "store", embedder=embedder)
        try:
            report = engine.index()
            scores = evaluate(engine, EVAL_DIR / "rust-by-example-queries.tsv", k=10)
        finally:
            engine.close()
    modes = {m.mode: {"ndcg": m.ndcg, "mrr": m.mrr, "recall": m.recall, "queries": m.queries} for m in scores.modes}
    log.info("quality: %s", modes)
    return {"files": report.files, "chunks": report.chunks, "modes": modes}


def phase_throughput(embedder: Embedder, repeats: int) -> dict:
    """Pipeline (scan, read, parse, chunk, embed, write) vs the bare model on the same texts."""
    pipeline_s: list[float] = []
    raw_s: list[float] = []
    pipeline_cpu: list[float] = []
    raw_cpu: list[float] = []
    embedded_counts: list[int] = []
    with tempfile.TemporaryDirectory(prefix="kbls-bench-") as tmp:
        root = unpack_eval(Path(tmp))
        embedder.load()
        # Warm both paths once (ONNX allocates its arenas on the first batches).
        embedder._model.embed(["warm up"] * embedder.config.batch_size, batch_size=embedder.config.batch_size)
        for i in range(repeats):
            given: list[list[str]] = []  # one list per model call, as the pipeline grouped them

            def pipeline() -> None:
                engine = Engine(root, store_dir=Path(tmp) / f"store-{i}", embedder=embedder)
                original = engine.embedder.embed_passages

                def recording(texts):
                    given.append(list(texts))
                    return original(texts)

                engine.embedder.embed_passages = recording  # instance attribute: this engine only
                try:
                    wall, cpu = time.perf_counter(), time.process_time()
                    report = engine.index()
                    pipeline_s.append(time.perf_counter() - wall)
                    pipeline_cpu.append(time.process_time() - cpu)
                finally:
                    del engine.embedder.embed_passages
                    engine.close()
                count = sum(len(call) for call in given)
                assert report.embedded == count, (report.embedded, count)
                embedded_counts.append(count)

            def raw(calls: list[list[str]]) -> None:
                """The bare model on the same texts, in the same calls and order (prefix included)."""
                wall, cpu = time.perf_counter(), time.process_time()
                for call in calls:
                    texts = [embedder.passage_prefix + t for t in call]
                    for _ in embedder._model.embed(texts, batch_size=embedder.config.batch_size):
                        pass
                raw_s.append(time.perf_counter() - wall)
                raw_cpu.append(time.process_time() - cpu)

            # Alternate which side goes first, so a drift in machine load favours neither.
            if i % 2 == 0 or not embedded_counts:
                pipeline()
                raw(given)
            else:
                calls = last_calls
                raw(calls)
                pipeline()
            last_calls = given
            log.info("throughput repeat %d: %d chunks in %d calls, pipeline %.2fs (cpu %.2fs), raw %.2fs (cpu %.2fs)",
                     i + 1, embedded_counts[-1], len(given), pipeline_s[-1], pipeline_cpu[-1], raw_s[-1], raw_cpu[-1])
    chunks = embedded_counts[0]
    pipeline = statistics.median(pipeline_s)
    raw_median = statistics.median(raw_s)
    return {
        "chunks": chunks, "repeats": repeats, "batch_size": embedder.config.batch_size,
        "threads": embedder.config.threads, "pipeline_seconds": pipeline_s, "raw_seconds": raw_s,
        "pipeline_cpu_seconds": pipeline_cpu, "raw_cpu_seconds": raw_cpu,
        "pipeline_chunks_per_s": chunks / pipeline, "raw_chunks_per_s": chunks / raw_median,
        # Each repeat measures both sides back to back: the median of those ratios resists load
        # drift between repeats better than the ratio of the two medians.
        "overhead": statistics.median(p / r for p, r in zip(pipeline_s, raw_s)) - 1.0,
        "overhead_cpu": statistics.median(pipeline_cpu) / statistics.median(raw_cpu) - 1.0,
        "paired_ratios": [p / r for p, r in zip(pipeline_s, raw_s)],
    }


def rust_web_root() -> Path:
    """Download and unpack rust-web-src once; the root is the rustc source folder."""
    folder = CACHE / "rust-web"
    folder.mkdir(parents=True, exist_ok=True)
    debs = sorted(folder.glob(f"{RUST_WEB_PACKAGE}_*.deb"))
    if not debs:
        subprocess.run(["apt-get", "download", RUST_WEB_PACKAGE], cwd=folder, check=True)
        debs = sorted(folder.glob(f"{RUST_WEB_PACKAGE}_*.deb"))
    extracted = folder / "extracted"
    if not extracted.is_dir():
        subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(extracted)], check=True)
    roots = sorted((extracted / "usr" / "src").glob("rustc-*"))
    if not roots:
        raise SystemExit(f"no usr/src/rustc-* in {extracted}")
    return roots[-1]


def phase_rustweb(embedder: Embedder, repeats: int) -> dict:
    root = rust_web_root()
    store = CACHE / "rust-web" / "store"
    config = Config(include=["**/*.md"])
    previous = load_results().get("rustweb", {})
    first = previous.get("first_index")
    if (store / STORE_FILE).exists():
        # The Engine would set a store it cannot use aside and start over: an hour of embedding
        # on two cores. Say so instead; delete benchmarks/.cache/rust-web/store to rebuild.
        try:
            Store(store, model_id=embedder.model_id, dimension=embedder.dimension, model_sha256=embedder.sha256).close()
        except StoreError as exc:
            raise SystemExit(f"bench_engine: {exc}\nDelete {store} to index rust-web-src from scratch.")
    engine = Engine(root, config=config, store_dir=store, embedder=embedder)
    try:
        if not (store / "complete").exists():
            started = time.perf_counter()
            report = engine.index()
            seconds = time.perf_counter() - started
            first = {"seconds": seconds, "files": report.files, "chunks": report.chunks,
                     "embedded": report.embedded, "skipped": len(report.skipped)}
            (store / "complete").write_text(json.dumps(first))
            log.info("rust-web first index: %s", first)
        elif first is None:
            first = json.loads((store / "complete").read_text())
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            report = engine.index()
            times.append(time.perf_counter() - started)
            if report.embedded or report.changed:
                raise SystemExit(f"an unchanged re-index embedded {report.embedded}, wrote {report.changed}")
        counts = engine.store.counts()
    finally:
        engine.close()
    markdown = sum(1 for _ in root.rglob("*.md"))
    return {"root": str(root.relative_to(CACHE.parent.parent)), "markdown_files": markdown,
            "files": counts.files, "chunks": counts.chunks, "first_index": first,
            "reindex_seconds": times, "reindex_median": statistics.median(times)}


# -- the doc ---------------------------------------------------------------------------------
def render(results: dict) -> str:
    out = [START, "## Engine", ""]
    out.append("Written by `benchmarks/bench_engine.py`; each block says when and where it was measured. "
               "Model: all-MiniLM-L6-v2 int8 (bundled), default config unless noted.")
    quality = results.get("quality")
    if quality:
        m = quality["machine"]
        out += ["", "### Retrieval quality (shared eval set)", "",
                f"Rust by Example, {quality['files']} files, {quality['chunks']} chunks, "
                f"{next(iter(quality['modes'].values()))['queries']} queries; relevance per file "
                f"(hits grouped by file). {quality['date']}, {where(m)}.", "",
                "| mode | nDCG@10 | MRR@10 | Recall@10 |", "|---|---|---|---|"]
        for mode in MODES:
            s = quality["modes"].get(mode)
            if s:
                out.append(f"| {mode} | {s['ndcg']:.3f} | {s['mrr']:.3f} | {s['recall']:.3f} |")
        ndcg = {k: v["ndcg"] for k, v in quality["modes"].items()}
        beats = ndcg["hybrid"] > max(ndcg["semantic"], ndcg["lexical"])
        out += ["", f"Hybrid {'beats' if beats else 'does NOT beat'} both single modes on nDCG@10."]
    tp = results.get("throughput")
    if tp:
        m = tp["machine"]
        out += ["", "### Index throughput vs the raw model", "",
                f"Same {tp['chunks']} chunk texts (Rust by Example, the texts the pipeline gave the model, in the same calls and order), "
                f"same model object, batch size {tp['batch_size']}, threads "
                f"{tp['threads'] or 'onnxruntime default'}; {tp['repeats']} interleaved repeats in one process, "
                f"medians. Pipeline = a full index into a fresh store (scan, read, parse, chunk with exact "
                f"token counts, embed, SQLite/FTS5/sqlite-vec writes). {tp['date']}, {where(m)}.", "",
                "| | chunks/s | seconds (median) | all repeats (s) |", "|---|---|---|---|",
                f"| raw fastembed | {tp['raw_chunks_per_s']:.1f} | {statistics.median(tp['raw_seconds']):.2f} | "
                f"{', '.join(f'{s:.2f}' for s in tp['raw_seconds'])} |",
                f"| kbls index | {tp['pipeline_chunks_per_s']:.1f} | {statistics.median(tp['pipeline_seconds']):.2f} | "
                f"{', '.join(f'{s:.2f}' for s in tp['pipeline_seconds'])} |",
                "", f"Pipeline overhead, wall clock (median of the per-repeat ratios): {tp['overhead'] * 100:+.1f}% "
                      f"(budget: under 10%)."]
        if tp.get("pipeline_cpu_seconds"):
            out += ["", f"CPU time of this process (all threads), medians: pipeline "
                        f"{statistics.median(tp['pipeline_cpu_seconds']):.1f} s, raw "
                        f"{statistics.median(tp['raw_cpu_seconds']):.1f} s: overhead {tp['overhead_cpu'] * 100:+.1f}%. "
                        f"Per-repeat wall-clock ratios pipeline/raw: "
                        f"{', '.join(f'{r:.2f}' for r in tp['paired_ratios'])}. On a machine shared with other "
                        f"work the wall-clock figures can swing by more than the 10% being measured; the CPU-time "
                        f"ratio is the steadier estimate."]
    rw = results.get("rustweb")
    if rw:
        m = rw["machine"]
        first = rw.get("first_index") or {}
        out += ["", "### Unchanged re-index of rust-web-src", "",
                f"Debian `rust-web-src` ({rw['markdown_files']} markdown files under `{rw['root'].split('/')[-1]}`; "
                f"config `include: ['**/*.md']`): {rw['files']} files, {rw['chunks']} chunks in the store. "
                f"{rw['date']}, {where(m)}.", "",
                f"- unchanged re-index (walk + stat, nothing read or embedded): median "
                f"**{rw['reindex_median']:.2f} s** of {len(rw['reindex_seconds'])} "
                f"({', '.join(f'{s:.2f}' for s in rw['reindex_seconds'])})"]
        if first.get("seconds"):
            out.append(f"- first full index: {first['seconds'] / 60:.1f} min, {first['embedded']} chunks embedded "
                       f"({first['embedded'] / first['seconds']:.1f} chunks/s), {first['skipped']} files skipped"
                       + (f"; {first['note']}" if first.get("note") else ""))
    out += ["", END]
    return "\n".join(out)


def write_doc(results: dict) -> None:
    replace_section(DOC, START, END, render(results))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phase", action="append", choices=("quality", "throughput", "rustweb"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="ONNX threads (default: onnxruntime's)")
    parser.add_argument("--doc-only", action="store_true", help="rewrite the doc from the saved results")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    if not args.doc_only:
        embedder = Embedder(ModelConfig(threads=args.threads))
        for phase in args.phase or ["quality", "throughput", "rustweb"]:
            log.info("phase %s", phase)
            if phase == "quality":
                figures = phase_quality(embedder)
            elif phase == "throughput":
                figures = phase_throughput(embedder, max(args.repeats, 3))
            else:
                figures = phase_rustweb(embedder, max(args.repeats, 3))
            save_results(phase, figures)
            write_doc(load_results())
    write_doc(load_results())
    print(DOC.read_text().split(START, 1)[1].split(END, 1)[0], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
