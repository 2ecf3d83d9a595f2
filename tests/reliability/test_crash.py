"""Issue 6, "Crash during indexing": SIGKILL `kbls index` (and `kbls serve`) at random points.

After every kill the store must be consistent (integrity_check ok, chunks <-> FTS rows one to
one, each chunk's text with one vector or one pending mark, file hashes matching the files),
every file in it must hold exactly the chunks of an uninterrupted index, nothing written before
(notes, vectors) may be lost, and the restarted run must not embed a chunk whose vector was
already committed. A first index writes every note lexically before it embeds: some kills must
land in the embedding pass, with every note written and texts still pending. Embeddings are
counted by `tests/support/counting_cli.py`, which logs each embedded chunk hash before the model
runs, so even a killed process leaves its count behind.

Sizes: 150 notes and 12 kills in `make test`; 400 notes and 20 kills with KBLS_LONG=1.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.corpus import make_corpus, sized, write_config
from tests.support.processes import COUNTING_CLI, child_env, read_embed_log
from tests.support.raw_stdio import frame, initialize_params
from tests.support.store_check import StoreState, check_store

from kbls.engine import Engine
from kbls.indexing.embed import Embedder
from kbls.storage.store import STORE_FILE

pytestmark = pytest.mark.slow

BATCH = 8  # model.batch_size: the engine embeds 4 batches (32 chunks) before it writes


Process = subprocess.Popen[str] | subprocess.Popen[bytes]
#: start(root, store, embed log, tmp_path) -> the process indexing the store
Starter = Callable[[Path, Path, Path, Path], Process]


def _reference(tmp_path: Path, root: Path, embedder: Embedder) -> StoreState:
    engine = Engine(root, store_dir=tmp_path / "reference-store", embedder=embedder)
    try:
        engine.index()
    finally:
        engine.close()
    return check_store(tmp_path / "reference-store", root, full_scan_done=True)


def _start_index(root: Path, store: Path, log: Path, tmp_path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(COUNTING_CLI), "index", "--root", str(root), "--store", str(store), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=child_env(tmp_path, KBLS_EMBED_LOG=str(log)),
    )


def _initialize_messages(root: Path) -> bytes:
    """initialize + initialized for one workspace folder, framed for stdio."""
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params(root)}
    return frame(initialize) + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})


def _start_serve(root: Path, store: Path, log: Path, tmp_path: Path) -> subprocess.Popen[bytes]:
    """A daemon on stdio whose stdin stays open (so it keeps running) and stdout goes to a file."""
    with open(tmp_path / "serve.out", "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, str(COUNTING_CLI), "serve"], stdin=subprocess.PIPE, stdout=out,
            stderr=subprocess.DEVNULL, env=child_env(tmp_path, KBLS_EMBED_LOG=str(log)),
        )
    assert proc.stdin is not None
    proc.stdin.write(_initialize_messages(root))
    proc.stdin.flush()
    return proc


def _wait_for_embedding(log: Path, proc: Process, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and log.stat().st_size:
            return
        time.sleep(0.02)


def _crash_loop(tmp_path: Path, embedder: Embedder, start: Starter, kills: int, notes: int) -> None:
    root = tmp_path / "notes"
    make_corpus(root, notes)
    store = tmp_path / "store"
    # The daemon reads the store location from the config; `kbls index` gets --store too.
    write_config(root, store=str(store), extra=f"model:\n  batch_size: {BATCH}\n")
    reference = _reference(tmp_path, root, embedder)
    rng = random.Random(6)
    committed: set[str] = set()
    written: set[str] = set()
    embedded_total = 0
    killed = 0
    in_embedding_pass = in_lexical_pass = 0
    for attempt in range(kills):
        log = tmp_path / f"embedded-{attempt}.log"
        proc = start(root, store, log, tmp_path)
        if attempt % 3 == 0:
            time.sleep(rng.uniform(0.05, 2.0))  # anywhere, start-up and store creation included
        else:
            _wait_for_embedding(log, proc)
            time.sleep(rng.uniform(0.0, 2.5))  # while embedding and writing
        finished = proc.poll() is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        killed += not finished
        run = read_embed_log(log)
        assert len(run) == len(set(run)), f"run {attempt} embedded a chunk twice"
        redone = set(run) & committed
        assert not redone, f"run {attempt} re-embedded {len(redone)} chunks whose vectors were committed"
        embedded_total += len(run)
        if not (store / STORE_FILE).exists():
            # Killed during start-up (a busy machine), before the store file was created.
            assert not committed, f"after kill {attempt}: the store holding committed chunks is gone"
            continue
        state = check_store(store, root)
        for path, chunks in state.chunks.items():
            assert chunks == reference.chunks[path], f"after kill {attempt}: {path} holds other chunks"
        assert written <= set(state.chunks), f"after kill {attempt}: notes written before are gone"
        assert committed <= state.embedded, f"after kill {attempt}: vectors committed before are gone"
        in_embedding_pass += bool(state.pending) and state.chunks == reference.chunks
        in_lexical_pass += 0 < len(state.chunks) < len(reference.chunks)
        committed, written = state.embedded, set(state.chunks)
    log = tmp_path / "embedded-final.log"
    proc = start(root, store, log, tmp_path)
    if start is _start_index:
        out, err = proc.communicate(timeout=600)
        assert isinstance(out, str) and isinstance(err, str)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
        assert json.loads(out)["embedded"] == len(read_embed_log(log))
    else:
        _wait_until_indexed(store, reference, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    final = check_store(store, root, full_scan_done=start is _start_index)
    assert in_embedding_pass, "no kill landed after the lexical pass, in the embedding pass"
    assert not final.pending, "texts left pending after the completing run"
    run = read_embed_log(log)
    assert not set(run) & committed, "the completing run re-embedded committed chunks"
    assert final.chunks == reference.chunks, "the index differs from an uninterrupted one"
    assert final.embedded >= reference.embedded
    embedded_total += len(run)
    # What a kill can waste: at most the one batch being embedded or written (4 x BATCH chunks,
    # plus the chunks of the note that filled it).
    wasted = embedded_total - len(reference.embedded)
    assert wasted <= killed * (4 * BATCH + 8), (wasted, killed)
    print(
        f"{killed} kills ({in_lexical_pass} in the lexical pass, {in_embedding_pass} in the embedding pass), "
        f"{len(reference.embedded)} distinct chunks, "
        f"{embedded_total} embedded in all"
    )


def _wait_until_indexed(store: Path, reference: StoreState, proc: Process, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the daemon exited"
        try:
            state = check_store(store)
            if state.chunks == reference.chunks and not state.pending:
                return
        except AssertionError:
            pass  # read in the middle of a write burst: try again
        time.sleep(0.5)
    raise AssertionError("the daemon did not finish indexing")


def test_sigkill_during_kbls_index_loses_and_redoes_nothing(tmp_path: Path, embedder: Embedder) -> None:
    _crash_loop(tmp_path, embedder, _start_index, kills=sized(12, 20), notes=sized(150, 400))


def test_sigkill_during_kbls_serve_loses_and_redoes_nothing(tmp_path: Path, embedder: Embedder) -> None:
    pytest.importorskip("kbls.lsp.server")
    _crash_loop(tmp_path, embedder, _start_serve, kills=sized(6, 20), notes=sized(100, 400))
