"""Engine benchmark: retrieval quality, index throughput against the raw model, re-index time.

Writes its figures into `docs/benchmarks.md` between `<!-- engine:start -->` and
`<!-- engine:end -->` (under `## Engine`), leaving every other section alone.

Phases (all by default; pick some with `--phase`):

- `quality`: unpack both shared eval sets (Rust by Example, TIL), index them (stores kept in
  `benchmarks/.cache/eval/`), and report nDCG@10 (binary and graded), MRR@10 and Recall@10 of the
  three search modes, and how many off-topic queries find nothing; `--baseline` also runs the
  sets' naive baseline for the columns beside.
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

import numpy as np

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


EVAL_SETS = ("rust-by-example", "til")
SET_TITLES = {"rust-by-example": "Rust by Example", "til": "TIL (Simon Willison's notes)"}


def unpack_eval(into: Path, name: str = "rust-by-example") -> Path:
    with tarfile.open(EVAL_DIR / f"{name}-src.tgz") as tar:
        tar.extractall(into, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(into)
    return into / "src"


def run_baseline(name: str) -> dict[str, dict[str, float]]:
    """The shared set's naive baseline, run in this Python: {mode: {ndcg_binary, mrr, recall}}."""
    out = subprocess.run(
        [sys.executable, str(EVAL_DIR / "naive_baseline.py"), str(EVAL_DIR / f"{name}-src.tgz"),
         str(EVAL_DIR / f"{name}-queries.tsv")], capture_output=True, text=True, check=True, timeout=3600,
    ).stdout
    figures = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 7 and parts[0] in MODES:  # "hybrid nDCG@10 0.842 MRR@10 0.801 R@10 0.963"
            figures[parts[0]] = {"ndcg_binary": float(parts[2]), "mrr": float(parts[4]), "recall": float(parts[6])}
    return figures


# -- phases ----------------------------------------------------------------------------------
def phase_quality(embedder: Embedder, baseline: bool) -> dict:
    """Both shared sets: every mode's figures, off-topic queries left empty, and (with
    `baseline`) the naive baseline run beside. Stores are kept in benchmarks/.cache/eval, so a
    second run re-embeds only chunks that changed."""
    previous = load_results().get("quality", {}).get("sets", {})
    sets = {}
    off_topic = [q.strip() for q in (EVAL_DIR / "off-topic-queries.txt").read_text().splitlines() if q.strip()]
    for name in EVAL_SETS:
        folder = CACHE / "eval" / name
        if not (folder / "src").is_dir():
            unpack_eval(folder, name)
        engine = Engine(folder / "src", store_dir=folder / "store", embedder=embedder)
        try:
            report = engine.index()
            scores = evaluate(engine, EVAL_DIR / f"{name}-queries.tsv", k=10)
            empty = sum(1 for q in off_topic if not engine.search(q, limit=10).hits)
        finally:
            engine.close()
        modes = {m.mode: {"ndcg": m.ndcg, "ndcg_binary": m.ndcg_binary, "mrr": m.mrr, "recall": m.recall,
                          "queries": m.queries} for m in scores.modes}
        base = run_baseline(name) if baseline else previous.get(name, {}).get("baseline", {})
        sets[name] = {"files": report.files, "chunks": report.chunks, "modes": modes, "baseline": base,
                      "off_topic_empty": empty, "off_topic": len(off_topic)}
        log.info("quality %s: %s, off-topic empty %d/%d", name, modes, empty, len(off_topic))
    return {"sets": sets}


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
        last_calls: list[list[str]] = []
        for i in range(repeats):
            given: list[list[str]] = []  # one list per model call, as the pipeline grouped them

            def pipeline(i: int = i, given: list[list[str]] = given) -> None:
                engine = Engine(root, store_dir=Path(tmp) / f"store-{i}", embedder=embedder)
                original = engine.embedder.embed_passages

                def recording(texts: list[str]) -> np.ndarray:
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
        "overhead": statistics.median(p / r for p, r in zip(pipeline_s, raw_s, strict=True)) - 1.0,
        "overhead_cpu": statistics.median(pipeline_cpu) / statistics.median(raw_cpu) - 1.0,
        "paired_ratios": [p / r for p, r in zip(pipeline_s, raw_s, strict=True)],
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
            raise SystemExit(f"bench_engine: {exc}\nDelete {store} to index rust-web-src from scratch.") from None
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
def render_quality(quality: dict) -> list[str]:
    m = quality["machine"]
    out = ["", "### Retrieval quality (shared eval sets)", "",
           f"`kbls eval` on the two shared workspaces (`../shared/eval`), beside the naive baseline there "
           f"(`naive_baseline.py`: heading split, 900-character windows, one FTS5 column, OR query, RRF k=60, "
           f"same model). Relevance per file, hits grouped by file, top 10. nDCG binary gives every relevant "
           f"file gain 1, as the baseline computes it; nDCG graded (kbls's own) gives the i-th listed relevant "
           f"file 1/i. {quality['date']}, {where(m)}."]
    for name, data in quality["sets"].items():
        base = data.get("baseline", {})
        out += ["", f"**{SET_TITLES.get(name, name)}**: {data['files']} files, {data['chunks']} chunks, "
                    f"{next(iter(data['modes'].values()))['queries']} queries; off-topic queries with no hit "
                    f"(hybrid): {data['off_topic_empty']} of {data['off_topic']}.", "",
                "| mode | nDCG@10 binary | baseline | nDCG@10 graded | MRR@10 | baseline | Recall@10 | baseline |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for mode in MODES:
            s, b = data["modes"].get(mode), base.get(mode, {})
            if s:
                def fmt(v: float | None) -> str:
                    return "—" if v is None else f"{v:.3f}"
                out.append(f"| {mode} | **{s['ndcg_binary']:.3f}** | {fmt(b.get('ndcg_binary'))} | {s['ndcg']:.3f} | "
                           f"{s['mrr']:.3f} | {fmt(b.get('mrr'))} | {s['recall']:.3f} | {fmt(b.get('recall'))} |")
    return out


def render(results: dict) -> str:
    out = [START, "## Engine", ""]
    out.append("Written by `benchmarks/bench_engine.py`; each block says when and where it was measured. "
               "Model: all-MiniLM-L6-v2 int8 (bundled), default config unless noted.")
    quality = results.get("quality")
    if quality and "sets" in quality:
        out += render_quality(quality)
    tp = results.get("throughput")
    if tp:
        m = tp["machine"]
        out += ["", "### Index throughput vs the raw model", "",
                f"Same {tp['chunks']} chunk texts (Rust by Example, the texts the pipeline gave the model, "
                f"in the same calls and order), "
                f"same model object, batch size {tp['batch_size']}, threads "
                f"{tp['threads'] or 'onnxruntime default'}; {tp['repeats']} interleaved repeats in one process, "
                f"medians. Pipeline = a full index into a fresh store (scan, read, parse, chunk with exact "
                f"token counts, embed, SQLite/FTS5/sqlite-vec writes). Raw = fastembed's `embed` on each call's "
                f"texts in their order, in batches of {tp['batch_size']} padded to the longest; the pipeline's "
                f"embedder sorts a call's texts by length into batches of at most 2,048 padded tokens "
                f"(`indexing/embed_batches.py`), so it can cost less than the raw model. "
                f"{tp['date']}, {where(m)}.", "",
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


def _blocks(section: str) -> dict[str, str]:
    """The `### ` blocks of an engine section, by heading."""
    blocks: dict[str, str] = {}
    for part in section.split("\n### ")[1:]:
        heading, _, _ = part.partition("\n")
        blocks[heading] = "### " + part.split(END, 1)[0].rstrip("\n") + "\n"
    return blocks


def write_doc(results: dict) -> None:
    """Rewrite the engine section; a block this run has no results for (a phase not run on this
    machine, a hand-measured comparison) is kept as the doc had it."""
    fresh = render(results)
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    old = text.split(START, 1)[1].split(END, 1)[0] if START in text and END in text else ""
    kept = [block for heading, block in _blocks(old).items() if heading not in _blocks(fresh)]
    if kept:
        fresh = fresh.replace(END, "\n".join(kept) + "\n" + END)
    replace_section(DOC, START, END, fresh)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phase", action="append", choices=("quality", "throughput", "rustweb"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="ONNX threads (default: onnxruntime's)")
    parser.add_argument("--doc-only", action="store_true", help="rewrite the doc from the saved results")
    parser.add_argument("--baseline", action="store_true", help="also run the shared sets' naive baseline (minutes)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    if not args.doc_only:
        embedder = Embedder(ModelConfig(threads=args.threads))
        for phase in args.phase or ["quality", "throughput", "rustweb"]:
            log.info("phase %s", phase)
            if phase == "quality":
                figures = phase_quality(embedder, args.baseline)
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
