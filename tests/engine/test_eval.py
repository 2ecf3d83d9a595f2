"""Retrieval metrics (the shared eval sets themselves are checked in tests/quality)."""

from __future__ import annotations

import math

import pytest

from kbls.evaluate import binary_ndcg, read_queries, score_ranking


def test_a_perfect_ranking_scores_one():
    assert score_ranking(["a.md", "b.md", "x.md"], ["a.md", "b.md"], 10) == (1.0, 1.0, 1.0)


def test_nothing_relevant_found_scores_zero():
    assert score_ranking(["x.md", "y.md"], ["a.md"], 10) == (0.0, 0.0, 0.0)


def test_the_best_note_second_scores_less_than_first():
    recall, rr, ndcg = score_ranking(["x.md", "a.md"], ["a.md"], 10)
    assert recall == 1.0 and rr == 0.5 and math.isclose(ndcg, 1 / math.log2(3))
    _, _, swapped = score_ranking(["b.md", "a.md"], ["a.md", "b.md"], 10)
    assert 0 < swapped < 1


def test_binary_ndcg_gives_every_relevant_path_the_same_gain():
    assert binary_ndcg(["a.md", "b.md"], ["a.md", "b.md"], 10) == 1.0
    assert math.isclose(binary_ndcg(["b.md", "a.md"], ["a.md", "b.md"], 10), 1.0)  # order among relevant: free
    assert math.isclose(binary_ndcg(["x.md", "a.md"], ["a.md"], 10), 1 / math.log2(3))


def test_only_the_top_k_count():
    assert score_ranking(["x.md"] * 10 + ["a.md"], ["a.md"], 10) == (0.0, 0.0, 0.0)


def test_read_queries_splits_relevant_paths(tmp_path):
    tsv = tmp_path / "q.tsv"
    tsv.write_text("query\trelevant\nborrow rules\ta.md | b/c.md\n")
    assert read_queries(tsv) == [("borrow rules", ["a.md", "b/c.md"])]
    (tmp_path / "bad.tsv").write_text("q\tr\nx\ty\n")
    with pytest.raises(ValueError, match="header"):
        read_queries(tmp_path / "bad.tsv")
