"""`explain`: each hit says how its score was made (each signal's score and weight), so a person
can see why it ranked where it did; the figures add up to the score."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.model import indexed_engine

from kbls.engine import Engine
from kbls.indexing.embed import Embedder
from kbls.results import Hit
from kbls.retrieval.fusion import SECTION_SHARE

NOTES = {
    "cooking/bread.md": """
        # Sourdough bread

        Feed the starter the night before. Mix flour, water and salt, fold four times, shape,
        then proof overnight in the fridge and bake in a hot dutch oven.
        """,
    "rust/channels.md": """
        # Channels

        Send values from one thread to another: the receiver takes messages from the channel.
        """,
    "garden/houseplants.md": """
        # Keeping houseplants healthy

        Yellow leaves and root rot usually mean too much water.
        """,
}
#: a note of two sections, each long enough to be a chunk of its own.
STARTER = """
    # Sourdough starter

    ## Feeding

    Feed the sourdough starter equal weights of flour and water every morning, keep it in a
    warm corner of the kitchen, and throw half of it away before each feeding so the jar does
    not overflow. A lively starter doubles within six hours and smells pleasantly sour.

    ## Baking day

    On baking day use the sourdough starter at its peak: mix it into the dough with salt, fold
    the dough four times an hour apart, shape a round loaf and bake it in a hot dutch oven with
    the lid on for twenty minutes, then without the lid until the crust is dark.
    """


@pytest.fixture(scope="module")
def ranked(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Engine]:
    engine = indexed_engine(tmp_path_factory.mktemp("explain"), {**NOTES, "cooking/starter.md": STARTER}, embedder)
    yield engine
    engine.close()


def _made_of(hit: Hit) -> float:
    e = hit.explain
    assert e is not None
    return e.semantic * e.semantic_weight + e.lexical * e.lexical_weight + e.sections


@pytest.mark.parametrize("group_by_file", [False, True])
def test_each_hit_shows_each_signals_score_and_weight_and_they_make_its_score(ranked: Engine, group_by_file: bool) -> None:
    hits = ranked.search("bake a loaf of sourdough bread", explain=True, group_by_file=group_by_file, limit=10).hits
    assert hits and hits[0].path in ("cooking/bread.md", "cooking/starter.md")
    for hit in hits:
        e = hit.explain
        assert e is not None and abs(e.semantic_weight + e.lexical_weight - 1.0) < 1e-3
        assert 0.0 <= e.semantic <= 1.0 and 0.0 <= e.lexical <= 1.0
        assert e.cosine is not None and abs(_made_of(hit) - hit.score) < 2e-3, (hit.path, e, hit.score)
    best = hits[0].explain
    assert best is not None and best.coverage is not None and best.coverage > 0.5 and best.bm25_share is not None
    assert "semantic" in best.describe() and "lexical" in best.describe() and "coverage" in best.describe()


def test_a_single_mode_has_all_the_weight_and_nothing_is_explained_unasked(ranked: Engine) -> None:
    lexical = ranked.search("sourdough", mode="lexical", explain=True).hits[0].explain
    assert lexical is not None and (lexical.semantic_weight, lexical.lexical_weight) == (0.0, 1.0)
    assert lexical.cosine is None
    semantic = ranked.search("sourdough", mode="semantic", explain=True).hits[0].explain
    assert semantic is not None and (semantic.semantic_weight, semantic.lexical_weight) == (1.0, 0.0)
    assert all(h.explain is None for h in ranked.search("sourdough").hits)


def test_a_note_with_a_second_matching_section_shows_what_it_added(ranked: Engine) -> None:
    hits = ranked.search("sourdough starter", explain=True, group_by_file=True).hits
    starter = next(h for h in hits if h.path == "cooking/starter.md")
    assert starter.more >= 1 and starter.explain is not None
    chunks = ranked.search("sourdough starter", limit=50).hits
    second = sorted((h.score for h in chunks if h.path == starter.path), reverse=True)[1]
    assert abs(starter.explain.sections - SECTION_SHARE * second) < 2e-3
    assert abs(_made_of(starter) - starter.score) < 2e-3
