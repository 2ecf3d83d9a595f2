"""Quality guard: `kbls eval` on the four shared evaluation workspaces (../shared/eval beside the
clone: a book, personal notes, technical docs with front matter and shortcodes, a wiki-linked
vault) must keep the retrieval quality reached, every mode must stay at or above the naive
baseline's figure where it reached it, and off-topic queries must find nothing.

Deterministic with the bundled model. Each workspace is indexed once per session into a
temporary store (`shared_sets`: tests/postgres compares the team store on the same) and evaluated once:
about 20 s (Rust by Example, 750 chunks), 2 min (til, 4,400 chunks), 3 min (otel-docs, 5,800
chunks) and 40 s (pkm, 1,350 chunks) on two idle cores, several times that on a loaded machine. Skipped, with the reason
printed, where the shared set is absent.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.shared_sets import EVAL_DIR, SETS, SharedSets

from kbls.engine import Engine
from kbls.evaluate import EvalReport, evaluate
from kbls.indexing.embed import Embedder

#: hybrid nDCG@10 (graded, as `kbls eval` reports it) reached on 2026-12-02, minus 0.01.
HYBRID_FLOOR = {"rust-by-example": 0.896 - 0.01, "til": 0.899 - 0.01, "otel-docs": 0.825 - 0.01, "pkm": 0.786 - 0.01}
#: binary nDCG@10 of the naive baseline (../shared/eval/README.md) per mode, where kbls's same
#: mode reached it: that mode must stay at or above it.
BASELINE = {
    "rust-by-example": {"lexical": 0.780, "semantic": 0.776, "hybrid": 0.842},
    "til": {"lexical": 0.626, "semantic": 0.869, "hybrid": 0.759},
    # hybrid (binary 0.817 / 0.794) is under the baseline's 0.827 / 0.814 on these two (not met):
    # guarded from below by HYBRID_FLOOR, not against the baseline
    "otel-docs": {"lexical": 0.722, "semantic": 0.660},
    "pkm": {"lexical": 0.683, "semantic": 0.742},
}
#: of the 20 off-topic queries, at least this many must find nothing in each workspace.
OFF_TOPIC_EMPTY = 18
#: the off-topic queries of each set (pkm has its own: the others' ask about notes it holds).
OFF_TOPIC = {"pkm": "pkm-off-topic.txt"}

pytestmark = pytest.mark.quality


@pytest.fixture(scope="module", params=SETS)
def workspace(request: pytest.FixtureRequest, shared_sets: SharedSets, embedder: Embedder) -> Iterator[tuple[str, Engine]]:
    indexed = shared_sets.get(request.param)
    engine = Engine(indexed.root, store_dir=indexed.store, embedder=embedder)
    yield indexed.name, engine
    engine.close()


@pytest.fixture(scope="module")
def reports() -> dict[str, EvalReport]:
    return {}


def report_of(workspace: tuple[str, Engine], reports: dict[str, EvalReport]) -> EvalReport:
    name, engine = workspace
    if name not in reports:
        reports[name] = evaluate(engine, EVAL_DIR / f"{name}-queries.tsv", k=10)
    return reports[name]


def test_hybrid_keeps_the_quality_reached(workspace, reports):
    name, _ = workspace
    ndcg = {m.mode: m.ndcg for m in report_of(workspace, reports).modes}
    assert ndcg["hybrid"] >= HYBRID_FLOOR[name], ndcg


def test_hybrid_beats_both_single_modes(workspace, reports):
    ndcg = {m.mode: m.ndcg for m in report_of(workspace, reports).modes}
    assert ndcg["hybrid"] > max(ndcg["semantic"], ndcg["lexical"]), ndcg


def test_every_mode_stays_at_or_above_the_naive_baseline(workspace, reports):
    name, _ = workspace
    binary = {m.mode: m.ndcg_binary for m in report_of(workspace, reports).modes}
    below = {mode: (round(binary[mode], 3), floor) for mode, floor in BASELINE[name].items() if binary[mode] < floor}
    assert not below, below


def test_off_topic_queries_find_nothing(workspace):
    name, engine = workspace
    listed = EVAL_DIR / OFF_TOPIC.get(name, "off-topic-queries.txt")
    queries = [line.strip() for line in listed.read_text().splitlines() if line.strip()]
    found = {q: [h.path for h in engine.search(q, limit=10).hits] for q in queries}
    empty = sum(1 for paths in found.values() if not paths)
    assert empty >= OFF_TOPIC_EMPTY, {q: p[:3] for q, p in found.items() if p}
