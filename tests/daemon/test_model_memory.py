"""The daemon's memory (issue 12 item 5): the model loads from its prepared copy
(`kbls.indexing.model_cache`), which gives the same vectors as the file as shipped, is checked and
built again when damaged, is done without when it cannot be had; and a `kbls serve` serving a
small workspace stays well under the 400 MB budget.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from tests.support.corpus import make_corpus, write_config
from tests.support.raw_stdio import RawStdio

from kbls.indexing import model_cache
from kbls.indexing.embed import BUNDLED_SHA256, Embedder, _bundled_model_file

TEXTS = [
    "how do I borrow a value mutably",
    "Sourdough bread needs a lively starter, flour, water and salt; the dough rests overnight.",
    # longer than the model's 256 tokens: truncated the same way by both
    " ".join(f"paragraph {i} about kernels, sockets and the memory of a daemon" for i in range(60)),
]

#: VmHWM of `kbls serve` indexing 200 small notes, then 30 searches: 262 MB with the prepared copy
#: (2026-12-01), 341 MB with the model file as shipped (folding its weights at each load).
SMALL_WORKSPACE_PEAK_MB = 300


def _shipped_embedder(monkeypatch: pytest.MonkeyPatch) -> Embedder:
    """The bundled model loaded from the file as shipped: a cache path that cannot be a folder."""
    monkeypatch.setenv(model_cache.CACHE_ENV, "/dev/null/no-cache")
    model = Embedder()
    model.load()
    return model


def test_the_prepared_copy_gives_the_same_vectors_as_the_shipped_model(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert embedder.loaded_from == model_cache.prepared_folder(BUNDLED_SHA256) / model_cache.MODEL_FILE
    shipped = _shipped_embedder(monkeypatch)
    assert shipped.loaded_from == _bundled_model_file()
    assert np.array_equal(embedder.embed_passages(TEXTS), shipped.embed_passages(TEXTS))
    for text in TEXTS:
        assert np.array_equal(embedder.embed_query(text), shipped.embed_query(text))


def test_a_damaged_copy_is_built_again(embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert embedder.loaded_from is not None
    monkeypatch.setenv(model_cache.CACHE_ENV, str(tmp_path / "prepared"))
    folder = model_cache.prepared_folder(BUNDLED_SHA256)
    shutil.copytree(embedder.loaded_from.parent, folder)
    with (folder / model_cache.DATA_FILE).open("r+b") as data:
        data.seek(1 << 20)
        data.write(b"\x7f" * 64)  # weights changed, size unchanged
    assert model_cache.verified(folder, BUNDLED_SHA256) is None

    rebuilt = model_cache.prepared_model(_bundled_model_file(), BUNDLED_SHA256)

    assert rebuilt == folder / model_cache.MODEL_FILE
    assert model_cache.verified(folder, BUNDLED_SHA256) == rebuilt
    assert (folder / model_cache.DATA_FILE).read_bytes() == (embedder.loaded_from.parent / model_cache.DATA_FILE).read_bytes()


def test_a_copy_of_another_model_or_onnxruntime_is_not_used(embedder: Embedder) -> None:
    assert embedder.loaded_from is not None
    folder = embedder.loaded_from.parent
    assert model_cache.verified(folder, BUNDLED_SHA256) == embedder.loaded_from
    assert model_cache.verified(folder, "0" * 64) is None


def test_without_a_usable_cache_the_shipped_file_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(model_cache.CACHE_ENV, "/dev/null/no-cache")
    assert model_cache.prepared_model(_bundled_model_file(), BUNDLED_SHA256) is None
    shipped = _shipped_embedder(monkeypatch)
    assert shipped.embed_query("a query still embeds").shape == (384,)


def _peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_a_daemon_serving_a_small_workspace_peaks_well_under_the_budget(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    make_corpus(root, 200)
    write_config(root)
    server = RawStdio(tmp_path, log_level="INFO")  # KBLS_MODEL_CACHE: the session's prepared copy
    try:
        server.initialize(root)
        deadline = time.monotonic() + 300
        while True:
            status = server.request("kb/status", {})
            if status["state"] == "ready" and status["queue"] == 0 and status["roots"]:
                break
            assert time.monotonic() < deadline, f"not ready: {status}"
            time.sleep(0.2)
        for i in range(10):
            for mode in ("hybrid", "semantic", "lexical"):
                server.request("kb/search", {"query": f"garden tomato recipe {i}", "mode": mode})
        peak = _peak_mb(server.proc.pid)
    finally:
        server.close()
    assert peak <= SMALL_WORKSPACE_PEAK_MB, f"kbls serve peaked at {peak:.0f} MB\n{server.log()[-3000:]}"
