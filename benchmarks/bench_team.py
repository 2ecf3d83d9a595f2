"""Team store benchmark (PostgreSQL 16 + pgvector from the pgserver wheel, on this machine).

Writes its figures into `docs/benchmarks.md` between `<!-- team:start -->` and `<!-- team:end -->`.

Phases (all by default; pick some with `--phase`):

- `ingest`: the store writes of an ingest, side by side: every note of a SQLite store (Rust by
  Example's: `--source`, else the shared set indexed first by the real model) written through
  `write_note` with its vectors into a fresh SQLite store and into a fresh team store,
  alternating, `--rounds` times; notes/s and chunks/s (embedding, the same for both backends,
  is left out: `kbls index` adds it to either).
- `search`: team stores of `--sizes` chunks (chunk texts of Rust by Example with a unique word
  per copy, random unit vectors, bulk-loaded with COPY, each text's terms made once, then the
  HNSW index built), searched in-process through `Engine.search` as `kb/search` does (the query embedded by the real model,
  lexical + vector + fusion + rows); p50/p99 per mode over the daemon benchmark's queries.
- `recall`: HNSW recall@10 against the exact scan in the same stores, 200 queries that are
  perturbed corpus vectors (0.6 v + 0.4 noise, as the daemon benchmark's vector phase), at the
  ef_search a 10-hit search uses (100) and at pgvector's default (40).

    .venv/bin/python benchmarks/bench_team.py --sizes 10000 100000
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tests.support.pg import copy_sqlite_store, new_database, start_server, team_store  # noqa: E402

import results_file  # noqa: E402
from bench_daemon import QUERIES  # noqa: E402
from bench_scan import LikeReal, real_sets  # noqa: E402
from doc_section import replace_section  # noqa: E402
from kbls.engine import Engine  # noqa: E402
from kbls.indexing.embed import Embedder  # noqa: E402
from kbls.storage.connection import connect  # noqa: E402
from kbls.storage.fts import BM25_WEIGHTS  # noqa: E402
from kbls.storage.postgres.terms import chunk_terms  # noqa: E402
from kbls.storage.store import STORE_FILE, Store  # noqa: E402

RESULTS = REPO / "benchmarks" / ".cache" / "team.json"
DOC = REPO / "docs" / "benchmarks.md"
START, END = "<!-- team:start -->", "<!-- team:end -->"
EVAL = Path(os.environ.get("KBLS_EVAL_DIR", "/work/shared/eval"))
CHUNKS_PER_FILE = 10
#: hnsw.ef_search values whose recall is measured (100: what a 10-hit search uses; 40: pgvector's default).
EF_SEARCH = (40, 100, 200, 400, 1000)
#: enough for the HNSW graph of 1M × 384 to be built in memory (pgvector builds far slower once it does not fit)
MAINTENANCE_WORK_MEM = "6GB"


def machine() -> dict[str, str]:
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit.stdout.strip() or "?",
        "cpus": str(os.cpu_count()),
        "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "python": platform.python_version(),
    }


def rbe_store(work: Path, embedder: Embedder) -> Path:
    """A SQLite store folder of Rust by Example (the shared set, indexed here by the real model)."""
    import tarfile

    with tarfile.open(EVAL / "rust-by-example-src.tgz") as tar:
        tar.extractall(work / "rbe", filter="data")
    engine = Engine(work / "rbe" / "src", store_dir=work / "rbe-store", embedder=embedder)
    try:
        engine.index()
    finally:
        engine.close()
    return work / "rbe-store"


# -- ingest ----------------------------------------------------------------------------------
def phase_ingest(server: Any, source: Path, embedder: Embedder, rounds: int, work: Path) -> dict[str, Any]:
    src = work / "source"
    shutil.copytree(source, src)
    Store(src, model_id=embedder.model_id, dimension=embedder.dimension, model_sha256=embedder.sha256).close()  # migrate
    conn = connect(src / STORE_FILE, read_only=True)
    chunks = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    conn.close()
    runs: dict[str, list[float]] = {"sqlite": [], "postgres": []}
    notes = 0
    for i in range(rounds):
        target = work / f"sqlite-{i}"
        store = Store(target, model_id=embedder.model_id, dimension=embedder.dimension, model_sha256=embedder.sha256)
        started = time.perf_counter()
        notes = copy_sqlite_store(src / STORE_FILE, store)
        runs["sqlite"].append(time.perf_counter() - started)
        store.close()
        team = team_store(new_database(server), src, model_id=embedder.model_id, dimension=embedder.dimension,
                          sha256=embedder.sha256)
        started = time.perf_counter()
        copy_sqlite_store(src / STORE_FILE, team)
        runs["postgres"].append(time.perf_counter() - started)
        team.close()
    out: dict[str, Any] = {"notes": notes, "chunks": chunks, "rounds": rounds}
    for backend, seconds in runs.items():
        median = statistics.median(seconds)
        out[backend] = {"seconds": median, "notes_s": notes / median, "chunks_s": chunks / median}
    print(f"ingest writes: {out}")
    return out


# -- synthetic team stores ---------------------------------------------------------------------
def texts_of(source: Path) -> list[tuple[str, str, str]]:
    conn = connect(source / STORE_FILE, read_only=True)
    rows = conn.execute("SELECT f.title, c.breadcrumb, c.body FROM chunks c JOIN files f ON f.id = c.file_id").fetchall()
    conn.close()
    return [(str(t), str(b), str(body)) for t, b, body in rows]


def random_blocks(size: int, dimension: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """`size` random unit vectors, 10,000 at a time."""
    for start in range(0, size, 10_000):
        block = rng.standard_normal((min(10_000, size - start), dimension), dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        yield block


@dataclass(frozen=True)
class Graph:
    """HNSW build parameters (pgvector's defaults: m 16, ef_construction 64)."""

    m: int = 16
    ef_construction: int = 64


def load_store(
    server: Any, size: int, texts: list[tuple[str, str, str]], embedder: Embedder, root: Path,
    like: LikeReal | None = None, graph: Graph = Graph(), vectors_only: bool = False,
) -> tuple[str, float]:
    """A team store of `size` chunks (random unit vectors, or `like` real ones; with
    `vectors_only` the vectors alone, for HNSW recall); its URL and the HNSW build seconds."""
    import psycopg

    url = new_database(server)
    team_store(url, root, model_id=embedder.model_id, dimension=embedder.dimension, sha256=embedder.sha256).close()
    rng = np.random.default_rng(size)
    with psycopg.connect(url, autocommit=True) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        root_id = conn.execute("SELECT id FROM roots").fetchone()[0]  # type: ignore[index]
        conn.execute("DROP INDEX embeddings_hnsw")
        copied = time.perf_counter()
        with conn.cursor() as cur:
            with cur.copy("COPY embeddings (hash, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(["text", "vector"])
                if like is None:
                    blocks = random_blocks(size, embedder.dimension, rng)
                else:
                    blocks = iter(np.array_split(like(size, rng, 0)[0], max(1, size // 10_000)))
                written = 0
                for block in blocks:
                    for vector in block:
                        copy.write_row((f"h{written}", vector))
                        written += 1
            if vectors_only:
                size = 0  # no files, chunks or terms
            files = (size + CHUNKS_PER_FILE - 1) // CHUNKS_PER_FILE
            with cur.copy("COPY files (root_id, path, hash, title, kind) FROM STDIN") as copy:
                for f in range(files):
                    copy.write_row((root_id, f"d{f % 50}/note-{f:06d}.md", f"f{f}", texts[f % len(texts)][0], "md"))
            file_ids = [r[0] for r in conn.execute("SELECT id FROM files ORDER BY id").fetchall()]
            embedding_ids = [r[0] for r in conn.execute("SELECT id FROM embeddings ORDER BY id").fetchall()]
            base_terms = [chunk_terms(*text) for text in texts]
            with cur.copy(
                "COPY chunks (chunk_id, root_id, file_id, ord, hash, embedding_id, start_line, end_line, breadcrumb, body, ntok) "
                "FROM STDIN"
            ) as copy:
                for n in range(size):
                    _, crumb, body = texts[n % len(texts)]
                    copy.write_row((f"c{n}", root_id, file_ids[n // CHUNKS_PER_FILE], n % CHUNKS_PER_FILE, f"h{n}",
                                    embedding_ids[n], 0, 1, crumb, f"{body} copy{n}", base_terms[n % len(texts)][1] + 1))
            chunk_ids = [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id").fetchall()]
            with cur.copy("COPY chunk_terms (chunk_id, root_id, term, tf, ntok) FROM STDIN") as copy:
                for n, chunk_id in enumerate(chunk_ids):
                    # A copy's terms are its text's plus its one unique word (chunk_terms is additive).
                    terms, ntok = base_terms[n % len(texts)]
                    ntok += 1
                    for term, tf in terms.items():
                        copy.write_row((chunk_id, root_id, term, tf, ntok))
                    copy.write_row((chunk_id, root_id, f"copy{n}", BM25_WEIGHTS[2], ntok))
        conn.execute("UPDATE roots SET revision = revision + 1")
        print(f"{size}: rows copied in {time.perf_counter() - copied:.1f} s", flush=True)
        conn.execute(f"SET maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'")
        started = time.perf_counter()
        conn.execute(
            "CREATE INDEX embeddings_hnsw ON embeddings USING hnsw (embedding vector_cosine_ops) "
            f"WITH (m = {int(graph.m)}, ef_construction = {int(graph.ef_construction)})"
        )
        built = time.perf_counter() - started
        conn.execute("ANALYZE")
    return url, built


def drop_database(server: Any, url: str) -> None:
    """Drop the database of `url` (a 1M-chunk store is several GB of disk)."""
    import psycopg

    name = url.split("?", 1)[0].rsplit("/", 1)[1]
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def phase_search(url: str, root: Path, embedder: Embedder, rounds: int) -> dict[str, Any]:
    engine = Engine(root, store_dir=url, embedder=embedder)
    out: dict[str, Any] = {}
    try:
        for query in QUERIES:  # warm: connections, statistics, plans
            engine.search(query, mode="hybrid")
        for mode in ("hybrid", "semantic", "lexical"):
            times = []
            for _ in range(rounds):
                for query in QUERIES:
                    started = time.perf_counter()
                    engine.search(query, mode=mode, limit=10)
                    times.append((time.perf_counter() - started) * 1000)
            times.sort()
            out[mode] = {"p50": statistics.median(times), "p99": times[min(len(times) - 1, int(len(times) * 0.99))],
                         "n": len(times)}
    finally:
        engine.close()
    return out


def phase_recall(
    url: str, root: Path, embedder: Embedder, queries: int, real_queries: np.ndarray | None = None
) -> dict[str, Any]:
    import psycopg
    from pgvector.psycopg import register_vector

    from kbls.storage.postgres.connection import PgPool
    from kbls.storage.postgres.vectors import PgVectors

    rng = np.random.default_rng(7)
    if real_queries is not None:
        qs = real_queries
    else:
        with psycopg.connect(url) as conn:
            register_vector(conn)
            count = int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])  # type: ignore[index]
            picks = rng.choice(count, size=queries, replace=False) + 1
            rows = conn.execute(
                "SELECT embedding FROM embeddings WHERE id = ANY(%s) ORDER BY id", (picks.tolist(),)
            ).fetchall()
        base = np.vstack([np.asarray(r[0].to_numpy(), dtype=np.float32) for r in rows])
        noise = rng.standard_normal(base.shape, dtype=np.float32)
        noise /= np.linalg.norm(noise, axis=1, keepdims=True)
        qs = 0.6 * base + 0.4 * noise
        qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    pool = PgPool(url, url)
    pool.vectors_ready = True
    vectors = PgVectors(pool, 1, embedder.dimension)
    out: dict[str, Any] = {"queries": len(qs)}
    try:
        exact = [{i for i, _ in vectors.exact_top(q, 10)} for q in qs]
        for ef in EF_SEARCH:
            found, times = 0, []
            for q, truth in zip(qs, exact, strict=True):
                started = time.perf_counter()
                rows = pool.fetch(
                    "SELECT id FROM embeddings ORDER BY embedding <=> %s LIMIT 10", (q,),
                    settings=[f"SET LOCAL hnsw.ef_search = {ef}"],
                )
                times.append((time.perf_counter() - started) * 1000)
                found += len(truth & {int(r[0]) for r in rows})
            out[f"ef{ef}"] = {"recall": found / (10 * len(qs)), "p50_ms": statistics.median(times)}
        times = []
        for q in qs[:50]:
            started = time.perf_counter()
            vectors.exact_top(q, 10)
            times.append((time.perf_counter() - started) * 1000)
        out["exact_p50_ms"] = statistics.median(times)
    finally:
        pool.close()
    return out


# -- doc ---------------------------------------------------------------------------------------
def write_doc(results: dict[str, Any]) -> None:
    lines = [START, "## Team store: PostgreSQL + pgvector (issue 24)", ""]
    lines += [
        "`benchmarks/bench_team.py` against PostgreSQL 16.2 + pgvector 0.6.2 from the pgserver wheel, started on this",
        "machine (unix socket, default settings but `maintenance_work_mem` 1 GB for the index build). Quality",
        "(same top-10 files, nDCG@10 against the SQLite backend) is `tests/postgres/test_quality.py`; ADR 0002.",
        "",
    ]
    ingest = results.get("ingest")
    if ingest:
        m = ingest["machine"]
        lines += [
            f"### Ingest writes ({m['date']}, commit {m['commit']}, {m['cpus']} cores, load {m['load']})",
            "",
            f"Every note of Rust by Example's store ({ingest['notes']} notes, {ingest['chunks']} chunks) written with its",
            f"vectors through `write_note`, one transaction a note, median of {ingest['rounds']} alternating rounds:",
            "",
            "| backend | seconds | notes/s | chunks/s |",
            "|---|---|---|---|",
        ]
        for backend in ("sqlite", "postgres"):
            r = ingest[backend]
            lines.append(f"| {backend} | {r['seconds']:.2f} | {r['notes_s']:.0f} | {r['chunks_s']:.0f} |")
        ratio = ingest["postgres"]["seconds"] / ingest["sqlite"]["seconds"]
        lines += ["", f"PostgreSQL / SQLite time: {ratio:.2f}. Embedding (the same for both, ~39 chunks/s on two cores) is",
                  "left out: end to end, `kbls index` is bound by the model on either backend.", ""]
    sizes = sorted((k for k in results if k.startswith("search-") and k.count("-") == 1), key=lambda k: int(k.split("-")[1]))
    if sizes:
        m = results[sizes[0]]["machine"]
        lines += [
            f"### `kb/search` latency and HNSW recall ({m['date']}, commit {m['commit']}, {m['cpus']} cores, load {m['load']})",
            "",
            "In-process `Engine.search` (query embedded by the model, both rankings, fusion, rows), limit 10, the daemon",
            "benchmark's 20 queries × rounds; random unit vectors; recall@10 of the HNSW index against the exact",
            "scan, 200 perturbed corpus vectors as queries.",
            "",
            "| chunks | HNSW build s | hybrid p50 / p99 ms | semantic p50 / p99 | lexical p50 / p99 | exact scan p50 ms |",
            "|---|---|---|---|---|---|",
        ]
        recall_rows = []
        for key in sizes:
            r = results[key]
            s, rc = r["search"], r["recall"]
            modes = " | ".join(f"{s[mode]['p50']:.1f} / {s[mode]['p99']:.1f}" for mode in ("hybrid", "semantic", "lexical"))
            lines.append(f"| {int(key.split('-')[1]):,} | {r['build_s']:.0f} | {modes} | {rc['exact_p50_ms']:.1f} |")
            efs = sorted(int(k[2:]) for k in rc if k.startswith("ef"))
            recall_rows.append(
                f"| {int(key.split('-')[1]):,} | "
                + "; ".join(f"ef {ef}: {rc[f'ef{ef}']['recall']:.3f} ({rc[f'ef{ef}']['p50_ms']:.1f} ms)" for ef in efs) + " |"
            )
        lines += ["", "HNSW recall@10 against the exact scan (p50 of one index query):", ""]
        lines += ["| chunks | recall@10 by ef_search |", "|---|---|", *recall_rows, ""]
    lines.append(END)
    replace_section(DOC, START, END, "\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--phase", action="append", choices=["ingest", "search"], help="default: both")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--source", type=Path, help="a SQLite store folder (default: Rust by Example indexed first)")
    parser.add_argument("--no-doc", action="store_true")
    parser.add_argument("--like-real", type=Path, metavar="STORES",
                        help="vectors like the shared sets' real ones (their stores under STORES, bench_scan.LikeReal), "
                        "searched by the sets' real queries")
    parser.add_argument("--vectors-only", action="store_true", help="only the vectors and HNSW recall (1M chunks)")
    parser.add_argument("--m", type=int, default=Graph.m, help="HNSW m")
    parser.add_argument("--ef-construction", type=int, default=Graph.ef_construction, help="HNSW ef_construction")
    args = parser.parse_args()
    phases = args.phase or ["ingest", "search"]
    embedder = Embedder()
    work = Path(tempfile.mkdtemp(prefix="kbls-bench-team-"))
    server = start_server(work / "pg")
    try:
        source = args.source or rbe_store(work, embedder)
        if "ingest" in phases:
            entry = phase_ingest(server, source, embedder, args.rounds, work)
            results_file.save(RESULTS, "ingest", {**entry, "machine": machine()})
        if "search" in phases:
            texts = texts_of(source)
            root = work / "root" / "handbook"
            root.mkdir(parents=True)
            like = None
            if args.like_real is not None:
                found_sets = real_sets(args.like_real)
                like = LikeReal(np.vstack([m for _, m, _ in found_sets]), np.vstack([q for _, _, q in found_sets]))
            graph = Graph(args.m, args.ef_construction)
            vectors = "random" if like is None else "like-real"
            # the doc's table is pgvector's defaults on random vectors; the others are kept beside it
            variant = "" if like is None and graph == Graph() else f"-{vectors}-m{graph.m}-ef{graph.ef_construction}"
            for size in args.sizes:
                url, built = load_store(server, size, texts, embedder, root, like, graph, args.vectors_only)
                print(f"{size}: loaded, HNSW built in {built:.1f} s", flush=True)
                search = {} if args.vectors_only else phase_search(url, root, embedder, args.rounds)
                print(f"{size}: {search}", flush=True)
                recall = phase_recall(url, root, embedder, 200, None if like is None else like.queries)
                print(f"{size}: {recall}", flush=True)
                results_file.save(RESULTS, f"search-{size}{variant}", {
                    "build_s": built, "search": search, "recall": recall, "vectors": vectors, "m": graph.m,
                    "ef_construction": graph.ef_construction, "machine": machine(),
                })
                drop_database(server, url)
    finally:
        server.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    if not args.no_doc:
        write_doc(results_file.load(RESULTS))


if __name__ == "__main__":
    main()
