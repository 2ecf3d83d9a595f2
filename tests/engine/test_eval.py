"""Retrieval metrics, and (KBLS_LONG=1) hybrid beating both single modes on the shared eval set."""

from __future__ import annotations

import math
import os
import tarfile
from pathlib import Path

import pytest

from kbls.engine import Engine
from kbls.evaluate import evaluate, read_queries, score_ranking

EVAL_DIR = Path(os.environ.get("KBLS_EVAL_DIR", Path(__file__).resolve().parents[3] / "shared" / "eval"))


def test_a_perfect_ranking_scores_one():
    assert score_ranking(["a.md", "b.md", "x.md"], ["a.md", "b.md"], 10) == (1.0, 1.0, 1.0)


def test_nothing_relevant_found_scores_zero():
    assert score_ranking(["x.md", "y.md"], ["a.md"], 10) == (0.0, 0.0, 0.0)


def test_the_best_note_second_scores_less_than_first():
    recall, rr, ndcg = score_ranking(["x.md", "a.md"], ["a.md"], 10)
    assert recall == 1.0 and rr == 0.5 and math.isclose(ndcg, 1 / math.log2(3))
    _, _, swapped = score_ranking(["b.md", "a.md"], ["a.md", "b.md"], 10)
    assert 0 < swapped < 1


def test_only_the_top_k_count():
    assert score_ranking(["x.md"] * 10 + ["a.md"], ["a.md"], 10) == (0.0, 0.0, 0.0)


def test_read_queries_splits_relevant_paths(tmp_path):
    tsv = tmp_path / "q.tsv"
    tsv.write_text("query\trelevant\nborrow rules\ta.md | b/c.md\n")
    assert read_queries(tsv) == [("borrow rules", ["a.md", "b/c.md"])]
    (tmp_path / "bad.tsv").write_text("q\tr\nx\ty\n")
    with pytest.raises(ValueError, match="header"):
        read_queries(tmp_path / "bad.tsv")


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("KBLS_LONG", "") in ("", "0"), reason="indexes 198 files: KBLS_LONG=1")
@pytest.mark.skipif(not (EVAL_DIR / "rust-by-example-src.tgz").exists(), reason="no shared eval set")
def test_hybrid_beats_both_single_modes_on_the_eval_set(tmp_path, embedder):
    with tarfile.open(EVAL_DIR / "rust-by-example-src.tgz") as tar:
        tar.extractall(tmp_path, filter="data")
    engine = Engine(tmp_path / "src", store_dir=tmp_path / "store", embedder=embedder)
    try:
        engine.index()
        report = evaluate(engine, EVAL_DIR / "rust-by-example-queries.tsv", k=10)
    finally:
        engine.close()
    ndcg = {m.mode: m.ndcg for m in report.modes}
    assert ndcg["hybrid"] > max(ndcg["semantic"], ndcg["lexical"]), ndcg
