"""Daemon benchmark: drives the real `kbls serve` over stdio and times what an editor feels.

Writes its figures into `docs/benchmarks.md` between `<!-- daemon:start -->` and
`<!-- daemon:end -->` (under `## Daemon`), leaving every other section alone.

Phases (all by default; pick some with `--phase`):

- `vectors`: the nearest-neighbour scan options of docs/adr/0001-vector-search.md side by side
  at 50k and 100k × 384 (random unit vectors; queries are perturbed corpus vectors), medians of
  interleaved repeated runs, with recall@10 against the exact answer.
- `search`: `kb/search` round trips (client send → result) at 1k, 10k and 50k chunks. The
  workspaces are real text (Rust by Example, copied with per-copy word changes so every chunk is
  distinct) indexed by the real pipeline, except that vectors are random unit vectors instead of
  model output (embedding 50k chunks on two cores takes most of an hour); queries are embedded by
  the real model. Stores are kept in `benchmarks/.cache/daemon/`.
- `save`: time from `textDocument/didSave` of a one-paragraph edit to the first `kb/search`
  that finds the new words, on the 50k workspace.
- `rss`: peak RSS (VmHWM) of `kbls serve` while it indexes ~1k chunks from scratch with the real
  model, and of the daemon serving the 50k workspace.

    .venv/bin/python benchmarks/bench_daemon.py                    # everything
    .venv/bin/python benchmarks/bench_daemon.py --phase vectors    # just the ADR figures
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import platform
import random
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as `kbls serve` does (see kbls/daemon/__init__.py)

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tests.support.raw_stdio import RawStdio  # noqa: E402

import results_file  # noqa: E402
from doc_section import replace_section  # noqa: E402

if TYPE_CHECKING:
    from kbls.retrieval.vectors import VectorIndex
    from kbls.storage.store import Store

log = logging.getLogger("bench_daemon")

EVAL_TGZ = Path(os.environ.get("KBLS_EVAL_DIR", REPO.parent / "shared" / "eval")) / "rust-by-example-src.tgz"
CACHE = REPO / "benchmarks" / ".cache" / "daemon"
RESULTS = REPO / "benchmarks" / ".cache" / "daemon-results.json"
DOC = REPO / "docs" / "benchmarks.md"
START, END = "<!-- daemon:start -->", "<!-- daemon:end -->"
SIZES = (1_000, 10_000, 50_000)
QUERIES = [
    "how do I borrow a value mutably", "iterate over a vector", "error handling with result",
    "closures capture variables", "generic trait bounds", "pattern matching on enums",
    "lifetime of a reference", "spawn a thread and join it", "read a file line by line",
    "format a string with padding", "box smart pointer heap", "derive debug for a struct",
    "match guard", "unsafe raw pointer", "hashmap entry api", "option unwrap or default",
    "cargo build dependencies", "integer overflow wrapping", "impl display trait", "macro_rules repetition",
]


# -- results and doc -------------------------------------------------------------------------
def machine() -> dict[str, str]:
    return {
        "cpu": platform.processor() or platform.machine(),
        "cores": str(os.cpu_count()),
        "python": platform.python_version(),
        "load_average_1m": f"{os.getloadavg()[0]:.1f}",
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def load_results() -> dict[str, Any]:
    return results_file.load(RESULTS)


def save_results(phase: str, figures: dict[str, Any]) -> None:
    results_file.save(RESULTS, phase, {"machine": machine(), **figures})


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


# -- vectors (the ADR) -----------------------------------------------------------------------
def phase_vectors(repeats: int, queries: int = 30, k: int = 50) -> dict[str, Any]:
    out: dict[str, Any] = {"k": k, "queries": queries, "repeats": repeats, "sizes": {}}
    rng = np.random.default_rng(1)
    dim = 384
    for n in (50_000, 100_000):
        out["sizes"][str(n)] = _measure_vectors(n, rng, dim, queries, k, repeats)
    out["real"] = real_embedding_recall()
    return out


def _measure_vectors(n: int, rng: np.random.Generator, dim: int, queries: int, k: int, repeats: int) -> dict[str, Any]:
    """Every vector-scan method on n random unit vectors: median/p99 ms and recall@10 against the exact scan."""
    import sqlite_vec

    from kbls.storage.connection import SQLITE

    log.info("vectors: %d x %d", n, dim)
    matrix = rng.standard_normal((n, dim), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    picks = rng.integers(0, n, queries)
    noise = rng.standard_normal((queries, dim), dtype=np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    qs = 0.6 * matrix[picks] + 0.4 * noise
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    ids = np.arange(1, n + 1, dtype=np.int64)
    scale = 127.0 / float(np.abs(matrix).max())
    tmp = Path(tempfile.mkdtemp(prefix="kbls-vec-"))
    conn = SQLITE.connect(str(tmp / "v.sqlite3"), isolation_level=None)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"CREATE VIRTUAL TABLE vcos USING vec0(embedding float[{dim}] distance_metric=cosine)")
    conn.execute(f"CREATE VIRTUAL TABLE vl2 USING vec0(embedding float[{dim}])")
    conn.execute(f"CREATE VIRTUAL TABLE vi8 USING vec0(embedding int8[{dim}])")
    conn.execute(f"CREATE VIRTUAL TABLE vbit USING vec0(embedding bit[{dim}])")
    conn.execute("BEGIN")
    for i in range(n):
        blob = matrix[i].tobytes()
        rowid = i + 1
        conn.execute("INSERT INTO vcos(rowid, embedding) VALUES (?, ?)", (rowid, blob))
        conn.execute("INSERT INTO vl2(rowid, embedding) VALUES (?, ?)", (rowid, blob))
        q8 = np.clip(np.round(matrix[i] * scale), -127, 127).astype(np.int8).tobytes()
        conn.execute("INSERT INTO vi8(rowid, embedding) VALUES (?, vec_int8(?))", (rowid, q8))
        conn.execute("INSERT INTO vbit(rowid, embedding) VALUES (?, vec_quantize_binary(?))", (rowid, blob))
    conn.execute("COMMIT")

    def exact_numpy(q: np.ndarray) -> list[int]:
        scores = matrix @ q
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [int(ids[i]) for i in best]

    def knn(table: str, blob: Any, expr: str = "?", kk: int = k) -> list[int]:
        sql = f"SELECT rowid FROM {table} WHERE embedding MATCH {expr} AND k = {kk}"
        return [r[0] for r in conn.execute(sql, (blob,)).fetchall()]

    def rescore(candidates: list[int], q: np.ndarray) -> list[int]:
        # Exact cosine over the candidates' float vectors, read back from the store.
        marks = ",".join("?" * len(candidates))
        rows = conn.execute(f"SELECT rowid, embedding FROM vl2 WHERE rowid IN ({marks})", candidates).fetchall()
        cand = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        order = np.argsort(-(cand @ q), kind="stable")[:k]
        return [rows[i][0] for i in order]

    index = _vector_index(ids, matrix)
    bits = sign_bits(matrix)
    candidates = int(n * 0.08)

    def prefiltered(q: np.ndarray) -> list[int]:
        distance = np.bitwise_count(bits ^ sign_bits(q[None, :])[0]).sum(axis=1, dtype=np.int32)
        rows = np.argpartition(distance, candidates - 1)[:candidates]
        scores = matrix[rows] @ q
        best = np.argpartition(-scores, k - 1)[:k]
        return [int(ids[rows[i]]) for i in best[np.argsort(-scores[best], kind="stable")]]

    methods: dict[str, Callable[[np.ndarray], list[int]]] = {
        "numpy float32 exact scan (VectorIndex), 1 BLAS thread": lambda q: [i for i, _ in index.top(q, k)],
        "numpy sign-bit prefilter 8% + exact rescore": prefiltered,
        "vec0 float, cosine": lambda q: knn("vcos", q.tobytes()),
        "vec0 float, L2 on normalized": lambda q: knn("vl2", q.tobytes()),
        "vec0 int8 (L2) top 4×k + exact rescore": lambda q: rescore(
            knn("vi8", np.clip(np.round(q * scale), -127, 127).astype(np.int8).tobytes(), "vec_int8(?)", 4 * k), q
        ),
        "vec0 bit (hamming) top 10×k + exact rescore": lambda q: rescore(
            knn("vbit", q.tobytes(), "vec_quantize_binary(?)", 10 * k), q
        ),
    }
    truth = [exact_numpy(q) for q in qs]
    times: dict[str, list[float]] = {name: [] for name in methods}
    recall: dict[str, float] = {}
    for name, fn in methods.items():  # warm-up + recall
        found = [fn(q) for q in qs]
        recall[name] = statistics.mean(len(set(f[:10]) & set(t[:10])) / 10 for f, t in zip(found, truth, strict=True))
    for _ in range(repeats):
        for name, fn in methods.items():  # interleaved, so drift hits every method alike
            for q in qs:
                started = time.perf_counter()
                fn(q)
                times[name].append((time.perf_counter() - started) * 1000)
    conn.close()
    shutil.rmtree(tmp, ignore_errors=True)
    two = _numpy_two_threads(n, queries, k, repeats)
    times["numpy float32 exact scan, 2 BLAS threads"] = two
    recall["numpy float32 exact scan, 2 BLAS threads"] = 1.0
    sizes: dict[str, Any] = {
        name: {
            "median_ms": round(statistics.median(t), 2), "p99_ms": round(pct(t, 99), 2),
            "recall_at_10": round(recall[name], 3),
        }
        for name, t in times.items()
    }
    sizes["_memory_mb"] = round(matrix.nbytes / 1e6, 1)
    log.info("vectors %d: %s", n, json.dumps(sizes, indent=1))
    return sizes


def sign_bits(matrix: np.ndarray) -> np.ndarray:
    packed = np.packbits(matrix > 0, axis=1)
    return packed.view(np.uint64) if packed.shape[1] % 8 == 0 else packed


def _numpy_two_threads(n: int, queries: int, k: int, repeats: int) -> list[float]:
    """The exact numpy scan in a child process with two OpenBLAS threads (the thread count is
    fixed when numpy loads), same data, same interleaving as far as one method goes."""
    import subprocess

    env = dict(os.environ, OPENBLAS_NUM_THREADS="2")
    code = (
        "import json,sys,time,numpy as np;"
        f"rng=np.random.default_rng(1);m=rng.standard_normal(({n},384),dtype=np.float32);"
        "m/=np.linalg.norm(m,axis=1,keepdims=True);"
        f"q=rng.standard_normal(({queries},384),dtype=np.float32);q/=np.linalg.norm(q,axis=1,keepdims=True);"
        "t=[]\n"
        f"for _ in range({repeats}):\n"
        " for v in q:\n"
        "  s=time.perf_counter();sc=m@v;b=np.argpartition(-sc,"
        f"{k - 1})[:{k}];b=b[np.argsort(-sc[b])];t.append((time.perf_counter()-s)*1000)\n"
        "print(json.dumps(t))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    two: list[float] = json.loads(done.stdout)
    return two


def _vector_index(ids: np.ndarray, matrix: np.ndarray) -> VectorIndex:
    """A `VectorIndex` holding `matrix` without a store (its sync is a no-op)."""
    from kbls.retrieval.vectors import VectorIndex

    class _NoStore:
        dimension = matrix.shape[1]

    index = VectorIndex(cast("Store", _NoStore()))  # only its dimension is read
    index.sync = lambda: None  # type: ignore[method-assign]
    index.load(ids, matrix)
    return index


def real_embedding_recall(store: Path = REPO / "benchmarks" / ".cache" / "rust-web" / "store") -> dict[str, Any]:
    """Recall of the sign-bit prefilter on real MiniLM vectors: the engine benchmark's rust-web
    store (read-only) and the 40 eval queries embedded by the real model. Random vectors (above)
    are the worst case for sign bits; this is the case that matters."""
    import csv

    import sqlite_vec

    from kbls.indexing.embed import Embedder
    from kbls.storage.connection import SQLITE
    from kbls.storage.store import STORE_FILE

    path = store / STORE_FILE
    if not path.exists():
        return {}
    conn = SQLITE.connect(f"file:{path}?mode=ro", uri=True)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    rows = conn.execute("SELECT rowid, embedding FROM vec_embeddings").fetchall()
    conn.close()
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    with open(EVAL_TGZ.parent / "rust-by-example-queries.tsv", encoding="utf-8") as handle:
        queries = [row[0] for row in csv.reader(handle, delimiter="\t")][1:]
    embedder = Embedder()
    bits = sign_bits(matrix)
    out: dict[str, Any] = {"vectors": len(rows), "queries": len(queries)}
    for fraction in (0.02, 0.04, 0.08):
        wanted = int(len(rows) * fraction)
        r10, r50 = [], []
        for text in queries:
            q = embedder.embed_query(text)
            exact = np.argsort(-(matrix @ q))[:50]
            distance = np.bitwise_count(bits ^ sign_bits(q[None, :])[0]).sum(axis=1, dtype=np.int32)
            cand = np.argpartition(distance, wanted - 1)[:wanted]
            got = cand[np.argsort(-(matrix[cand] @ q))[:50]]
            r10.append(len(set(got[:10]) & set(exact[:10])) / 10)
            r50.append(len(set(got) & set(exact)) / 50)
        out[f"{fraction:.2f}"] = {"recall_at_10": round(float(np.mean(r10)), 3),
                                  "min_recall_at_10": round(float(np.min(r10)), 2),
                                  "recall_at_50": round(float(np.mean(r50)), 3)}
    log.info("real-embedding recall: %s", out)
    return out


# -- workspaces ------------------------------------------------------------------------------
def _corpus() -> list[tuple[str, str]]:
    """(relative path, text) of Rust by Example's markdown files."""
    with tarfile.open(EVAL_TGZ) as tar:
        files = []
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".md"):
                handle = tar.extractfile(member)
                assert handle is not None, "a regular file has contents"
                text = handle.read().decode("utf-8", "replace")
                files.append((member.name.removeprefix("src/"), text))
    return sorted(files)


_VOCAB = [
    "amber", "basil", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "jade", "kelvin", "lumen", "meadow",
    "nectar", "onyx", "prism", "quartz", "russet", "sable", "tundra", "umber", "violet", "willow", "xenon", "yonder", "zircon",
]


def _mutate(text: str, rng: random.Random) -> str:
    """Append a word to every line (a comment in code) so each copy's chunks are distinct texts:
    vectors are content-addressed, and repeated chunks would shrink the scanned matrix."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif line.strip():
            word = f"{rng.choice(_VOCAB)}{rng.randint(0, 999)}"
            line = f"{line} // {word}" if fenced else f"{line} {word}"
        out.append(line)
    return "\n".join(out) + "\n"


def build_workspace(chunks: int) -> Path:
    """A workspace of about `chunks` chunks with its store, built once and kept in the cache."""
    from kbls.engine import Engine

    root = CACHE / f"ws-{chunks}"
    done = root / ".built"
    config = f"store: ../{root.name}-store\n"  # beside the root: a store inside it is a config error
    if done.exists() and (root / ".kbls.yaml").read_text() == config:
        return root
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(CACHE / f"{root.name}-store", ignore_errors=True)
    root.mkdir(parents=True)
    (root / ".kbls.yaml").write_text(config)
    corpus = _corpus()
    rng = random.Random(chunks)
    engine = Engine(root)
    dim = engine.embedder.dimension
    vec_rng = np.random.default_rng(chunks)

    def random_vectors(texts: Sequence[str]) -> np.ndarray:
        vectors = vec_rng.standard_normal((len(texts), dim)).astype(np.float32)
        unit: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return unit

    engine.embedder.embed_passages = random_vectors  # type: ignore[method-assign]
    copy, per_copy = 0, 0
    while True:
        # one copy first, to learn its chunks; then all the copies still needed in one index
        # (indexing after each copy rescans the growing workspace every time)
        step = 1 if not per_copy else max(1, -(-(chunks - engine.store.counts().chunks) // per_copy))
        for c in range(copy, copy + step):
            for rel, text in corpus:
                path = root / f"copy{c:03d}" / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(_mutate(text, rng) if c else text)
        copy += step
        report = engine.index()
        per_copy = per_copy or report.chunks
        log.info("workspace %d: copy %d -> %d chunks", chunks, copy, report.chunks)
        if report.chunks >= chunks:
            break
    # Trim the last copy down to about the target: drop whole files, then one more scan.
    excess = engine.store.counts().chunks - chunks
    for path in sorted((root / f"copy{copy - 1:03d}").rglob("*.md"), reverse=True):
        if excess <= 0:
            break
        rel = path.relative_to(root).as_posix()
        size = len(engine.store.file_chunks(rel))
        if 0 < size <= excess:
            path.unlink()
            excess -= size
    engine.index()
    final = engine.store.counts()
    engine.close()
    (root / ".built").write_text(json.dumps({"files": final.files, "chunks": final.chunks, "vectors": final.vectors}))
    return root


# -- the daemon ------------------------------------------------------------------------------
class BenchSession(RawStdio):
    """`kbls serve` driven by a synchronous client with no event loop and no watchdog thread, so
    the round trip measured is the server's (a threaded client adds its own hand-offs, which cost
    milliseconds each on a busy two-core machine)."""

    def search(self, query: str, **extra: Any) -> dict[str, Any]:
        result: dict[str, Any] = self.request("kb/search", {"query": query, **extra}, deadline=None)
        return result

    def wait_ready(self, timeout: float = 600) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status: dict[str, Any] = self.request("kb/status", {}, deadline=None)
            if status["state"] == "ready" and status["queue"] == 0 and status["roots"]:
                return status
            time.sleep(0.1)
        raise RuntimeError("the daemon did not become ready")

    def save(self, path: Path) -> None:
        self.notify("textDocument/didSave", {"textDocument": {"uri": path.as_uri()}})


def start(root: Path, tmp: Path, name: str, env: dict[str, str] | None = None) -> BenchSession:
    session = BenchSession(tmp, log_level="WARNING", name=name, env=env)
    session.initialize(root)
    return session


def rss_peak_mb(pid: int) -> float:
    return memory_mb(pid).get("VmHWM", float("nan"))


def memory_mb(pid: int) -> dict[str, float]:
    """VmHWM (peak), VmRSS, RssAnon and RssFile (mapped files: the kernel may drop them) in MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
            out[name] = round(int(value.split()[0]) / 1024, 1)
    return out


def phase_search(rounds: int, sizes: Sequence[int] = SIZES) -> dict[str, Any]:
    out: dict[str, Any] = {"rounds": rounds, "sizes": {}}
    tmp = Path(tempfile.mkdtemp(prefix="kbls-bench-"))
    for size in sizes:
        root = build_workspace(size)
        started = time.perf_counter()
        session = start(root, tmp, f"search-{size}")
        try:
            status = session.wait_ready(timeout=600)
            ready_s = time.perf_counter() - started
            figures: dict[str, Any] = {"chunks": status["roots"][0]["chunks"], "files": status["roots"][0]["files"],
                                       "ready_s": round(ready_s, 2)}
            for mode in ("hybrid", "semantic", "lexical"):
                for q in QUERIES:  # warm-up
                    session.search(q, mode=mode)
                times, server = [], []
                for i in range(rounds):
                    q = QUERIES[i % len(QUERIES)]
                    t0 = time.perf_counter()
                    result = session.search(q, mode=mode)
                    times.append((time.perf_counter() - t0) * 1000)
                    server.append(result["tookMs"])
                figures[mode] = {
                    "p50_ms": round(pct(times, 50), 2), "p99_ms": round(pct(times, 99), 2),
                    "server_p50_ms": round(pct(server, 50), 2),
                }
                log.info("search %d %s: %s", size, mode, figures[mode])
            figures["rss_mb"] = round(rss_peak_mb(session.proc.pid), 1)
            out["sizes"][str(size)] = figures
        finally:
            session.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def phase_save(edits: int) -> dict[str, Any]:
    size = SIZES[-1]
    root = build_workspace(size)
    tmp = Path(tempfile.mkdtemp(prefix="kbls-bench-"))
    session = start(root, tmp, "save")
    rel = "copy000/hello.md"
    note = root / rel
    original = note.read_text()
    times = []
    try:
        session.wait_ready(timeout=600)
        for i in range(edits):
            words = f"zorbly{i} quintessent{i} marmoset{i}"
            note.write_text(original + f"\nA fresh paragraph about the {words} written for edit {i}.\n")
            t0 = time.perf_counter()
            session.save(note)
            while True:
                hits = session.search(words, limit=3)["hits"]
                if any(h["path"] == rel and h["signals"]["lexical"] for h in hits):
                    break
                if time.perf_counter() - t0 > 30:
                    raise RuntimeError("the edit was not found within 30 s")
            times.append((time.perf_counter() - t0) * 1000)
            session.wait_ready()
            log.info("save %d: %.1f ms", i, times[-1])
    finally:
        note.write_text(original)
        session.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return {"chunks": size, "edits": edits, "median_ms": round(statistics.median(times), 1),
            "max_ms": round(max(times), 1)}


def phase_rss() -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="kbls-bench-"))
    root = tmp / "fresh"
    root.mkdir()
    (root / ".kbls.yaml").write_text("store: ../fresh-store\n")  # in tmp, removed with it
    for rel, text in _corpus():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    started = time.perf_counter()
    session = start(root, tmp, "rss")
    try:
        status = session.wait_ready(timeout=1800)
        seconds = time.perf_counter() - started
        indexing = {"chunks": status["roots"][0]["chunks"], "files": status["roots"][0]["files"],
                    "seconds": round(seconds, 1), "peak_rss_mb": round(rss_peak_mb(session.proc.pid), 1)}
    finally:
        session.close()
    log.info("rss while indexing: %s", indexing)
    shutil.rmtree(tmp, ignore_errors=True)
    return {"indexing": indexing, "serving": serving_memory(SIZES[-1])}


#: KBLS_MODEL_CACHE for each way of loading the model: a path that cannot be a folder makes
#: kbls load the model file as shipped (see kbls.indexing.model_cache).
MODEL_LOADS = {"prepared copy (built by a child at start)": None, "model file as shipped": "/dev/null/none"}


def serving_memory(size: int, rounds: int = 2) -> dict[str, Any]:
    """Memory of `kbls serve` serving the `size` workspace: started with an empty cache, ready,
    then 20 searches per mode; each way of loading the model, interleaved `rounds` times."""
    root = build_workspace(size)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in MODEL_LOADS}
    for _ in range(rounds):
        for name, model_cache in MODEL_LOADS.items():
            tmp = Path(tempfile.mkdtemp(prefix="kbls-bench-"))
            env = dict(os.environ)
            env.pop("KBLS_MODEL_CACHE", None)
            if model_cache:
                env["KBLS_MODEL_CACHE"] = model_cache
            session = start(root, tmp, "serving", env)
            try:
                session.wait_ready(timeout=600)
                ready = memory_mb(session.proc.pid)
                for mode in ("hybrid", "semantic", "lexical"):
                    for q in QUERIES:
                        session.search(q, mode=mode)
                after = memory_mb(session.proc.pid)
            finally:
                session.close()
                shutil.rmtree(tmp, ignore_errors=True)
            runs[name].append({"ready_rss_mb": ready["VmRSS"], "peak_mb": after["VmHWM"], "rss_mb": after["VmRSS"],
                               "anon_mb": after["RssAnon"], "file_mb": after["RssFile"]})
            log.info("serving %d, %s: %s", size, name, runs[name][-1])
    return {"chunks": size, "rounds": rounds, "loads": runs}


# -- doc -------------------------------------------------------------------------------------
def render(results: dict[str, Any]) -> str:
    lines = [START, "## Daemon", ""]
    lines.append("Measured by `benchmarks/bench_daemon.py` against the real `kbls serve` over stdio, in-process "
                 "(`KBLS_NO_DAEMON=1`: no relay), with a one-thread raw JSON-RPC client "
                 "(`tests/support/raw_stdio.py`, no watchdog thread when timed; round trip = request written → "
                 "response parsed). The machine is shared with other jobs: the 1-minute load average at "
                 "the time of each phase is given, and tails (p99) suffer most from it.")
    lines.append("")
    search = results.get("search")
    if search:
        m = search["machine"]
        lines += [f"`kb/search` round trips, {search['rounds']} queries per mode after a warm-up "
                  f"({m['cores']} cores, load {m.get('load_average_1m', '?')}, {m['date']}). "
                  "Targets at 50k: p50 ≤ 15 ms, p99 ≤ 40 ms.", ""]
        lines += ["| chunks | files | ready after start | hybrid p50 / p99 | semantic p50 / p99 | lexical p50 / p99 | RSS |",
                  "|---:|---:|---:|---:|---:|---:|---:|"]
        for f in search["sizes"].values():
            cells = [f"{f[mode]['p50_ms']:.1f} / {f[mode]['p99_ms']:.1f} ms" for mode in ("hybrid", "semantic", "lexical")]
            lines.append(f"| {f['chunks']:,} | {f['files']:,} | {f['ready_s']:.1f} s | " + " | ".join(cells)
                         + f" | {f['rss_mb']:.0f} MB |")
        lines += ["", "Workspaces: Rust by Example copied until the size is reached (every copy's prose lines get "
                  "a different extra word, so all chunks are distinct); random unit vectors stand in for model "
                  "output while the stores are built, queries are embedded by the real model. \"Ready after "
                  "start\" is process start → unchanged incremental scan finished.", ""]
    save = results.get("save")
    if save:
        lines += [f"Save → searchable (didSave of a one-paragraph edit → first `kb/search` that finds the new "
                  f"words) at {save['chunks']:,} chunks, {save['edits']} edits: median **{save['median_ms']:.0f} ms**, "
                  f"max {save['max_ms']:.0f} ms (target ≤ 150 ms; load {save['machine'].get('load_average_1m', '?')}, "
                  f"{save['machine'].get('date', '?')}).", ""]
    rss = results.get("rss")
    if rss:
        i = rss["indexing"]
        lines += [f"Peak RSS while indexing Rust by Example from scratch with the real model ({i['files']} files, "
                  f"{i['chunks']} chunks, {i['seconds']:.0f} s, load {rss['machine'].get('load_average_1m', '?')}): "
                  f"**{i['peak_rss_mb']:.0f} MB** (target ≤ 400 MB), with the daemon's 4 texts per model call "
                  "(1.8 GB with 32, 0.65 GB with 8). The RSS column above is the peak of the daemon serving "
                  "each workspace.", ""]
        serving = rss.get("serving")
        if serving:
            lines += [f"Memory of the daemon serving {serving['chunks']:,} chunks (started with an empty cache, ready, "
                      "then 20 searches per mode; VmHWM and VmRSS of the process; mapped = pages of mapped files, "
                      "which the kernel may drop and read again), each way of loading the model, "
                      f"{serving['rounds']} interleaved runs (target: peak ≤ 400 MB):", "",
                      "| model loaded from | peak | RSS when ready | RSS after searches | of which mapped |",
                      "|---|---:|---:|---:|---:|"]
            for name, runs in serving["loads"].items():
                def cell(key: str, runs: list[dict[str, float]] = runs) -> str:
                    return " / ".join(f"{r[key]:.0f}" for r in runs) + " MB"
                lines.append(f"| {name} | {cell('peak_mb')} | {cell('ready_rss_mb')} | {cell('rss_mb')} | "
                             f"{cell('file_mb')} |")
            lines.append("")
    vectors = results.get("vectors")
    if vectors:
        lines += [f"Vector scan options (ADR 0001), k = {vectors['k']}, median and p99 of "
                  f"{vectors['repeats']}×{vectors['queries']} interleaved queries, one run "
                  f"({vectors['machine'].get('date', '?')}):", ""]
        lines += ["| method | 50k median / p99 | 100k median / p99 | recall@10 (50k) |", "|---|---:|---:|---:|"]
        s50, s100 = vectors["sizes"]["50000"], vectors["sizes"]["100000"]
        for name in s50:
            if name.startswith("_"):
                continue
            a, b = s50[name], s100[name]
            lines.append(f"| {name} | {a['median_ms']:.1f} / {a['p99_ms']:.1f} ms | "
                         f"{b['median_ms']:.1f} / {b['p99_ms']:.1f} ms | {a['recall_at_10']:.2f} |")
        lines.append("")
        real = vectors.get("real") or {}
        if real:
            lines += [f"Sign-bit prefilter on real MiniLM vectors ({real['vectors']:,} vectors of the engine "
                      f"benchmark's rust-web store, {real['queries']} eval queries): recall@10 / recall@50 "
                      + ", ".join(f"{float(f) * 100:.0f} % rescored {v['recall_at_10']:.3f} / {v['recall_at_50']:.3f}"
                                  for f, v in real.items() if isinstance(v, dict)) + ".", ""]
    lines.append(END)
    return "\n".join(lines)


def write_doc(results: dict[str, Any]) -> None:
    replace_section(DOC, START, END, render(results))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phase", action="append", choices=("vectors", "search", "save", "rss"))
    parser.add_argument("--repeats", type=int, default=5, help="vector runs per method")
    parser.add_argument("--rounds", type=int, default=200, help="kb/search requests per mode and size")
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--doc-only", action="store_true", help="rewrite the doc from the saved results")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="workspace chunks of the search phase")
    parser.add_argument("--no-doc", action="store_true", help="print the figures; leave the saved results and the doc")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    logging.getLogger("pygls").setLevel(logging.WARNING)
    if not args.doc_only:
        for phase in args.phase or ["vectors", "search", "save", "rss"]:
            log.info("phase %s", phase)
            if phase == "vectors":
                figures = phase_vectors(args.repeats)
            elif phase == "search":
                figures = phase_search(args.rounds, args.sizes)
            elif phase == "save":
                figures = phase_save(args.edits)
            else:
                figures = phase_rss()
            if args.no_doc:
                print(json.dumps({phase: figures}, indent=1), flush=True)
                continue
            save_results(phase, figures)
            write_doc(load_results())
    if not args.no_doc:
        write_doc(load_results())
    return 0


if __name__ == "__main__":
    sys.exit(main())
