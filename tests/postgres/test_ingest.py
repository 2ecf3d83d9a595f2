"""Who writes a team store, and what its readers see: the ingest worker killed mid-run resumes
and loses nothing, a second worker is refused by the advisory lock, a search during an ingest
sees each note before or after its transaction, a worker or reader of another model is refused,
and a dropped connection is opened again (or the search says why)."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from tests.support.corpus import make_corpus
from tests.support.processes import KBLS, assert_no_traceback, child_env, run_kbls

from kbls.engine import Engine
from kbls.errors import ModelMismatchError
from kbls.storage.postgres.connection import StoreUnavailableError
from kbls.storage.postgres.location import PgLocation
from kbls.storage.postgres.store import PostgresStore


def _invariants(url: str) -> tuple[int, int]:
    """(files, chunks) after checking every chunk has its vector and its terms, in one snapshot."""
    with psycopg.connect(url) as conn:
        bare = conn.execute(
            "SELECT count(*) FROM chunks c WHERE c.ntok > 0 AND NOT EXISTS (SELECT 1 FROM chunk_terms t WHERE t.chunk_id = c.id)"
        ).fetchone()
        empty = conn.execute(
            "SELECT count(*) FROM files f WHERE f.hash IS NOT NULL AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.file_id = f.id)"
        ).fetchone()
        files = conn.execute("SELECT count(*) FROM files WHERE hash IS NOT NULL").fetchone()
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()
    assert bare == (0,) and empty == (0,)
    assert files is not None and chunks is not None
    return int(files[0]), int(chunks[0])


def _files(url: str) -> int:
    with psycopg.connect(url) as conn:
        exists = conn.execute("SELECT to_regclass('files') IS NOT NULL").fetchone()
        if not (exists and exists[0]):
            return 0
        row = conn.execute("SELECT count(*) FROM files").fetchone()
        return int(row[0]) if row else 0


def test_kill_9_mid_ingest_resumes_and_loses_nothing(tmp_path: Path, pg_url: str) -> None:
    root = tmp_path / "hand book"
    make_corpus(root, 120)
    env = child_env(tmp_path)
    proc = subprocess.Popen([str(KBLS), "index", "--root", str(root), "--store", pg_url], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    while _files(pg_url) < 10 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the ingest finished before it could be killed: give it more notes"
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    files, _ = _invariants(pg_url)
    assert 0 < files < 120
    again = run_kbls(["index", "--root", str(root), "--store", pg_url], tmp_path, env=env)  # the lock was freed
    assert_no_traceback(again)
    assert again.returncode == 0, again.stderr
    assert "chunks embedded" in again.stderr and f"{120} files" in again.stderr
    assert _invariants(pg_url)[0] == 120
    found = run_kbls(["search", "unique77x0v0", "--root", str(root), "--store", pg_url, "--mode", "lexical"], tmp_path, env=env)
    assert "note-0077.md" in found.stdout, found.stdout + found.stderr


def test_a_second_ingest_of_a_root_is_refused(tmp_path: Path, pg_url: str, vault: Path, open_engine) -> None:
    open_engine(vault, pg_url, ingest=True).index()
    store = PostgresStore(
        PgLocation.parse(pg_url, vault, "test"), model_id=open_engine(vault, pg_url).embedder.model_id,
        dimension=384, model_sha256=None, write=True,
    )
    try:
        with store.lock.hold(0.0) as held:
            assert held
            proc = run_kbls(["index", "--root", str(vault), "--store", pg_url], tmp_path)
            assert_no_traceback(proc)
            assert proc.returncode == 1
            assert "another ingest worker is writing root 'handbook'" in proc.stderr, proc.stderr
            assert "kbls index on" in proc.stderr  # who holds it
    finally:
        store.close()
    proc = run_kbls(["index", "--root", str(vault), "--store", pg_url], tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_a_reader_sees_each_note_before_or_after_its_transaction(
    tmp_path: Path, pg_url: str, vault: Path, open_engine: Callable[..., Engine]
) -> None:
    writer = open_engine(vault, pg_url, ingest=True)
    writer.index()
    reader = open_engine(vault, pg_url)
    note = vault / "big.md"
    prose = "Sails and ropes hold the mast while the crew trims the sheets against the wind. " * 12

    def version(word: str, parts: int) -> str:
        return "# Big\n\n" + "\n".join(f"## {word} part {i}\n\n{prose}\n" for i in range(parts))

    chunk_counts = set()
    for word, parts in (("alpha", 3), ("beta", 5)):
        note.write_text(version(word, parts), encoding="utf-8")
        writer.index(paths=[note])
        chunk_counts.add(len(writer.store.file_chunks("big.md")))
    assert len(chunk_counts) == 2
    stop = threading.Event()
    seen: set[int] = set()
    searched: list[int] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:
            while not stop.is_set():
                seen.add(len(reader.store.file_chunks("big.md")))
                hits = reader.search("sails ropes mast", mode="lexical", limit=20).hits
                crumbs = [h.breadcrumb for h in hits if h.path == "big.md"]
                versions = {w for w in ("alpha", "beta") if any(w in crumb for crumb in crumbs)}
                assert len(versions) <= 1, crumbs  # one search, one version of the note
                searched.append(len(versions))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=read)
    thread.start()
    try:
        for round_ in range(16):
            note.write_text(version("alpha", 3) if round_ % 2 else version("beta", 5), encoding="utf-8")
            writer.index(paths=[note])
    finally:
        stop.set()
        thread.join(30)
    assert not errors, errors
    assert seen <= chunk_counts and seen  # never a note half written
    assert sum(searched) > 0  # the searches found the note (in one version or the other)


def test_a_worker_or_reader_of_another_model_is_refused(tmp_path: Path, pg_url: str, vault: Path, open_engine) -> None:
    engine = open_engine(vault, pg_url, ingest=True)
    engine.index()
    for write in (True, False):
        with pytest.raises(ModelMismatchError, match="refusing to mix them"):
            PostgresStore(
                PgLocation.parse(pg_url, vault, "test"), model_id="intfloat/e5-small-v2", dimension=384,
                model_sha256=None, write=write,
            )
        with pytest.raises(ModelMismatchError, match="weights sha256"):
            PostgresStore(
                PgLocation.parse(pg_url, vault, "test"), model_id=engine.embedder.model_id, dimension=384,
                model_sha256="0" * 64, write=write,
            )
    assert _invariants(pg_url)[0] == 7  # nothing was written by the refused ones


def test_a_dropped_connection_is_opened_again_or_named(pg_url: str, vault: Path, open_engine) -> None:
    open_engine(vault, pg_url, ingest=True).index()
    reader = open_engine(vault, pg_url)
    first = [h.path for h in reader.search("sourdough starter", mode="hybrid").hits]
    assert first
    admin = pg_url.replace(pg_url.split("?")[0].rsplit("/", 1)[1] + "?", "postgres?", 1)
    name = pg_url.split("?")[0].rsplit("/", 1)[1]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid != pg_backend_pid()", (name,)
        )
    assert [h.path for h in reader.search("sourdough starter", mode="hybrid").hits] == first  # reconnected
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
        try:
            with pytest.raises(StoreUnavailableError, match="store postgresql://") as raised:
                reader.search("sourdough starter", mode="hybrid")
            assert "not currently accepting connections" in str(raised.value)
        finally:
            conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
    assert [h.path for h in reader.search("sourdough starter", mode="hybrid").hits] == first

