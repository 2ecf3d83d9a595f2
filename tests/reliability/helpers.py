"""Helpers of the reliability tests: corpora, subprocess runs of `kbls`, store invariants.

Every store lives in a test's tmp_path and every child process gets its own XDG_CACHE_HOME,
so nothing here touches the user's cache. `KBLS_LONG=1` (or `pytest --long`) scales the fault
tests up to the sizes of issue 6.
"""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from kbls.storage.store import SQLITE, STORE_FILE

HERE = Path(__file__).parent
REPO = HERE.parent.parent
KBLS = Path(sys.executable).parent / "kbls"
#: runs `kbls` with the embedder wrapped so each embedded chunk hash is logged (see its docstring).
COUNTING_CLI = HERE / "counting_cli.py"

WORDS = ["alpha", "beta", "gamma", "delta", "ownership", "borrow", "lifetime", "kernel", "socket", "garden", "tomato", "basil", "recipe", "travel", "train", "museum", "rust", "python", "memory", "cache", "index", "vector", "search", "note", "meeting", "budget", "plan", "river", "mountain", "coffee", "bread", "flour", "yeast", "oven"]


def long_run() -> bool:
    return os.environ.get("KBLS_LONG", "") not in ("", "0")


def sized(short: int, long: int) -> int:
    """`short` in `make test`, `long` with KBLS_LONG=1 / --long."""
    return long if long_run() else short


def note_text(i: int, rng: random.Random, version: int = 0) -> str:
    parts = [f"# Note {i}\n"]
    for s in range(rng.randint(1, 3)):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60)))
        parts.append(f"## Section {s}\n\n{words} unique{i}x{s}v{version}.\n")
    return "\n".join(parts)


def make_corpus(root: Path, count: int, seed: int = 0) -> list[Path]:
    """`count` small markdown notes (1-3 sections each) in ten folders."""
    rng = random.Random(seed)
    paths = []
    for i in range(count):
        path = root / f"d{i % 10}" / f"note-{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(i, rng), encoding="utf-8")
        paths.append(path)
    return paths


def write_config(root: Path, store: str = ".kbls-store", extra: str = "") -> None:
    (root / ".kbls.yaml").write_text(f"store: {store}\n" + textwrap.dedent(extra), encoding="utf-8")


def child_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The environment of a child `kbls`: private cache, no proxies, few threads."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    cache = tmp / "xdg-cache"
    cache.mkdir(parents=True, exist_ok=True)
    env.update(XDG_CACHE_HOME=str(cache), PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
    env.update(extra)
    return env


def run_kbls(args: list[str], tmp: Path, *, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(KBLS), *args], capture_output=True, text=True, timeout=timeout, env=env or child_env(tmp)
    )


def assert_no_traceback(proc: subprocess.CompletedProcess) -> None:
    for stream in (proc.stdout, proc.stderr):
        assert "Traceback" not in stream, stream


# -- the store -------------------------------------------------------------------------------
def connect(store_dir: Path):
    import sqlite_vec

    conn = SQLITE.connect(str(store_dir / STORE_FILE), timeout=30, isolation_level=None)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


@dataclass
class StoreState:
    #: path -> [(chunk_id, body)] in chunk order
    chunks: dict[str, list[tuple[str, str]]]
    #: chunk-text hashes with a stored vector
    embedded: set[str]
    orphans: int


def check_store(store_dir: Path, root: Path | None = None, *, full_scan_done: bool = False) -> StoreState:
    """Assert every invariant of issue 6 on one store and return what it holds.

    - `PRAGMA integrity_check` is ok;
    - each chunk's embedding exists in `embeddings` and `vec_embeddings`, each vector row has an
      `embeddings` row and the reverse; each chunk has exactly one FTS row with its text and each
      FTS row a chunk;
    - unreferenced vectors only before a full scan completed (`full_scan_done`);
    - with `root`: each file row's hash is the hash of the file on disk.
    """
    conn = connect(store_dir)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        chunk_ids = [r[0] for r in conn.execute("SELECT id FROM chunks")]
        fts = dict(conn.execute("SELECT rowid, body FROM chunks_fts").fetchall())
        bodies = dict(conn.execute("SELECT id, body FROM chunks").fetchall())
        assert len(fts) == conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
        assert set(fts) == set(chunk_ids), "chunks without an FTS row, or FTS rows without a chunk"
        assert all(fts[i] == bodies[i] for i in chunk_ids), "an FTS row holds another text than its chunk"
        missing = conn.execute(
            "SELECT count(*) FROM chunks WHERE embedding_id NOT IN (SELECT id FROM embeddings)"
        ).fetchone()[0]
        assert missing == 0, f"{missing} chunks point at no embedding"
        emb_ids = {r[0] for r in conn.execute("SELECT id FROM embeddings")}
        vec_ids = [r[0] for r in conn.execute("SELECT rowid FROM vec_embeddings")]
        assert len(vec_ids) == len(set(vec_ids))
        assert set(vec_ids) == emb_ids, "vectors without an embeddings row, or the reverse"
        orphans = conn.execute(
            "SELECT count(*) FROM embeddings WHERE id NOT IN (SELECT embedding_id FROM chunks)"
        ).fetchone()[0]
        if full_scan_done:
            assert orphans == 0, f"{orphans} unreferenced vectors after a completed full scan"
        bad = conn.execute("SELECT count(*) FROM chunks WHERE hash != (SELECT hash FROM embeddings e WHERE e.id = embedding_id)").fetchone()[0]
        assert bad == 0, "a chunk points at the vector of another text"
        chunks: dict[str, list[tuple[str, str]]] = {}
        for path, chunk_id, body in conn.execute(
            "SELECT f.path, c.chunk_id, c.body FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY f.path, c.ord"
        ):
            chunks.setdefault(path, []).append((chunk_id, body))
        if root is not None:
            for path, digest in conn.execute("SELECT path, hash FROM files WHERE hash IS NOT NULL"):
                on_disk = root / path
                if on_disk.exists():
                    data = on_disk.read_bytes()
                    assert digest == hashlib.blake2b(data, digest_size=16).hexdigest(), f"{path}: stale file hash"
        embedded = {r[0] for r in conn.execute("SELECT hash FROM embeddings")}
        return StoreState(chunks=chunks, embedded=embedded, orphans=orphans)
    finally:
        conn.close()


def read_embed_log(path: Path) -> list[str]:
    """Chunk hashes the counting CLI logged, one per line (a torn last line is dropped)."""
    if not path.exists():
        return []
    lines = path.read_text().split("\n")
    return [line for line in lines[:-1] if len(line) == 32]
