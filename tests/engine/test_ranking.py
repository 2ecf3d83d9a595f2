"""Ranking with the real model: function words never decide a ranking, diacritics are kept,
off-topic queries find nothing, scores are 0..1 confidences, a note ranks as a note."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.model import indexed_engine

from kbls.config import Config, SearchConfig
from kbls.engine import Engine
from kbls.indexing.embed import Embedder
from kbls.query.syntax import content_terms, fts_match, number_forms
from kbls.retrieval.lexical import QueryWords

NOTES = {
    "garden/houseplants.md": """
        # Keeping houseplants healthy

        Yellow leaves and root rot usually mean too much water. Isolate a plant that has pests
        or a disease, so the others do not catch it, and cut away the sick leaves.
        """,
    "rust/channels.md": """
        # Channels

        Send values from one thread to another: the receiver takes messages from the channel,
        from any number of senders, from anywhere in the program, and from every clone.
        """,
    "cv/resume.md": """
        # Mon résumé

        Le résumé liste chaque poste depuis 2010, avec les références.
        """,
    "tools/downloads.md": """
        # Interrupted downloads

        To resume a download where it stopped, pass -C - to curl; wget has --continue.
        """,
    "cooking/bread.md": """
        # Sourdough bread

        Feed the starter the night before. Mix flour, water and salt, fold four times, shape,
        then proof overnight in the fridge and bake in a hot dutch oven.

        ## Scoring the loaf

        A razor cut lets the loaf open where you want while it bakes.
        """,
}


@pytest.fixture(scope="module")
def ranked(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Engine]:
    engine = indexed_engine(tmp_path_factory.mktemp("ranking"), NOTES, embedder)
    yield engine
    engine.close()


def unfloored(engine: Engine) -> Engine:
    return Engine(
        engine.root, config=Config(search=SearchConfig(min_score=0.0)), store_dir=engine.store_dir,
        embedder=engine.embedder,
    )


# -- query building --------------------------------------------------------------------------
def test_function_words_leave_the_lexical_query_when_content_words_remain() -> None:
    assert content_terms("stop my plants from getting sick") == ["stop", "plants", "getting", "sick"]
    assert '"from"' not in fts_match("stop my plants from getting sick")
    assert content_terms("to be or not to be") == ["to", "be", "or", "not"]  # nothing else: kept
    assert fts_match("borrow check") == '"borrow" OR ("check" OR "check"*)'


def test_coverage_weighs_rare_words_more_and_counts_function_words_not_at_all(ranked: Engine) -> None:
    words = QueryWords.of("stop my plants from getting sick", ranked.store)
    assert words.coverage("from here, from there") == 0.0
    assert words.coverage("Stop plants getting sick") == pytest.approx(1.0)
    partial = words.coverage("the plants", "notes/garden.md")
    assert 0.0 < partial < 0.5
    assert words.coverage("the plantation stops") == 0.0  # whole words only (only the last is a prefix)
    assert words.coverage("homesick") == 0.0 and words.coverage("sickness") > 0.0  # the last word, as a prefix
    # The last word is matched as a prefix too: the user may still be typing it.
    assert QueryWords.of("houseplant heal", ranked.store).coverage("healthy houseplant") == 1.0


def test_number_forms_are_the_regular_singular_and_plural_spellings() -> None:
    assert number_forms("trains") == ("train",) and number_forms("train") == ("trains",)
    assert "bus" in number_forms("buses") and "branch" in number_forms("branches")
    assert "city" in number_forms("cities") and "cities" in number_forms("city")
    assert number_forms("class") == ("classes",) and "statu" not in number_forms("status")
    assert number_forms("ms") == () and number_forms("v2") == ()  # too short, not a word
    assert "us" not in number_forms("uses")  # never a function word


def test_a_word_the_notes_never_spell_as_typed_is_found_in_its_other_number(ranked: Engine) -> None:
    # No note says "plants" (the garden note says "plant" and "houseplants"): the query's
    # "plants" is looked for as "plant" too. "leaves" is in the notes: only "leaves" counts.
    words = QueryWords.of("plants leaves", ranked.store)
    assert '"plant"' in words.match and '"leaf"' not in words.match and '"leave"' not in words.match
    assert words.coverage("a plant") == pytest.approx(words.coverage("the plants"))
    assert 0.0 < words.coverage("a plant") < 1.0 and words.coverage("the leave") == 0.0
    hits = ranked.search("plants", mode="lexical").hits
    assert hits and hits[0].path == "garden/houseplants.md"


# -- behaviour -------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_a_function_word_is_never_the_only_reason_to_rank_first(ranked: Engine, mode: str) -> None:
    hits = ranked.search("stop my plants from getting sick", mode=mode, group_by_file=True).hits
    paths = [h.path for h in hits]
    assert paths and paths[0] == "garden/houseplants.md", paths
    if mode == "lexical":  # "from" is its only shared word: not a match at all
        assert "rust/channels.md" not in paths


def test_diacritics_are_kept_resume_and_resume_with_accents_differ(ranked: Engine) -> None:
    accented = [h.path for h in ranked.search("résumé", mode="lexical").hits]
    plain = [h.path for h in ranked.search("resume", mode="lexical").hits]
    assert accented == ["cv/resume.md"]
    assert plain == ["tools/downloads.md"]


def test_an_off_topic_query_finds_nothing_unless_the_floor_is_off(ranked: Engine) -> None:
    query = "marathon training plan for the last four weeks"
    assert ranked.search(query).hits == []
    assert ranked.search(query, mode="semantic").hits == []
    engine = unfloored(ranked)
    try:
        assert engine.search(query).hits  # something always ranks without a floor
    finally:
        engine.close()


def test_scores_are_confidences_from_0_to_1_best_first(ranked: Engine) -> None:
    for mode in ("hybrid", "semantic", "lexical"):
        hits = ranked.search("bake a loaf of sourdough bread", mode=mode, limit=10).hits
        assert hits and hits[0].path == "cooking/bread.md"
        scores = [h.score for h in hits]
        assert all(0.0 < s <= 1.0 for s in scores) and scores == sorted(scores, reverse=True)
    best = ranked.search("bake a loaf of sourdough bread").hits[0]
    assert best.score >= ranked.config.search.min_score


def test_a_note_scores_at_least_as_high_as_its_best_section(ranked: Engine) -> None:
    """Grouped by file, a note takes its best value of each signal (its title may hold the
    words, another section the meaning), so it never scores below its best chunk."""
    query = "sourdough loaf razor cut"
    plain = ranked.search(query, limit=20).hits
    grouped = ranked.search(query, limit=20, group_by_file=True).hits
    bread = [h for h in grouped if h.path == "cooking/bread.md"]
    assert bread and bread[0].score >= max(h.score for h in plain if h.path == "cooking/bread.md")


def test_min_score_is_validated() -> None:
    with pytest.raises(ValueError, match="min_score"):
        SearchConfig(min_score=1.5)


def test_weights_come_from_the_config(ranked: Engine, tmp_path: Path) -> None:
    lexical_only = Engine(
        ranked.root, config=Config(search=SearchConfig(semantic_weight=0.0, lexical_weight=1.0, min_score=0.0)),
        store_dir=ranked.store_dir, embedder=ranked.embedder,
    )
    try:
        hybrid = lexical_only.search("stop my plants from getting sick", limit=5).hits
        lexical = ranked.search("stop my plants from getting sick", mode="lexical", limit=5).hits
        assert [h.score for h in hybrid] == [h.score for h in lexical]
    finally:
        lexical_only.close()


# -- the VS Code protocol test's query (vscode-extension/test/protocol/protocol.test.js) --------
#: the travel notes of tests/fixtures/notes and of the VS Code test workspace, with neighbours.
TRAVEL = {
    "travel/japan.md": (Path(__file__).resolve().parents[1] / "fixtures" / "notes" / "travel" / "japan.md").read_text(),
    "travel/kyoto.md": """
        ---
        title: Kyoto trip
        tags: [travel, japan]
        ---
        # Kyoto trip

        Temples, gardens and the bamboo grove of Arashiyama.

        ## Getting around

        Buy a prepaid IC card for the city buses and the subway; the Shinkansen from Tokyo takes about
        two hours and fifteen minutes.
        """,
    "baking/sourdough.md": NOTES["cooking/bread.md"],
    "dev/git-rebase.md": """
        # Git rebase

        Rebasing replays your commits on top of another branch, giving a linear history.
        """,
}


@pytest.fixture(scope="module")
def travel(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Engine]:
    engine = indexed_engine(tmp_path_factory.mktemp("travel"), TRAVEL, embedder)
    yield engine
    engine.close()


def test_trains_and_buses_finds_the_note_about_the_bullet_train(travel: Engine) -> None:
    """No note says "trains": the Japan note speaks of the bullet train. The plural is looked for
    as its singular, so the lexical signal sees the query's content word."""
    paths = [h.path for h in travel.search("trains and buses", group_by_file=True).hits]
    assert paths and paths[0] == "travel/japan.md", paths


def test_a_filtered_query_lists_the_notes_there_that_hold_one_of_its_words(travel: Engine) -> None:
    """`path:travel/** trains and buses`: the Kyoto note holds "buses" and little of the query's
    meaning; inside the folder the user chose, that word is evidence enough. An unrelated query
    in the same folder still finds nothing, and the filter still holds."""
    paths = [h.path for h in travel.search("path:travel/** trains and buses", limit=10).hits]
    assert "travel/kyoto.md" in paths and "travel/japan.md" in paths, paths
    assert all(p.startswith("travel/") for p in paths)
    assert travel.search("path:travel/** knitting a scarf for beginners").hits == []
    assert travel.search("path:dev/** trains and buses").hits == []


TOMATO_NOTES = {
    # Both are close paraphrases of the query (cosine >= 0.70: semantic confidence clipped at 1);
    # the first is indexed first (lower rowid) and is the less close of the two.
    "garden/a-tomatoes.md": """
        # Tomatoes

        In summer, water the tomato plants deeply every morning.
        """,
    "garden/b-watering.md": """
        # Watering tomatoes in summer

        How to water tomato plants in summer.
        """,
}


@pytest.fixture(scope="module")
def tomatoes(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Engine]:
    engine = indexed_engine(tmp_path_factory.mktemp("tomatoes"), TOMATO_NOTES, embedder)
    yield engine
    engine.close()


@pytest.mark.parametrize("group_by_file", [True, False])
def test_equal_clipped_scores_go_to_the_closer_meaning_not_the_older_chunk(tomatoes: Engine, group_by_file: bool) -> None:
    """The semantic confidence is clipped at 1 for every close paraphrase; among those the closer
    one ranks first, whatever order the notes were indexed in."""
    query = "how to water tomato plants in summer"
    first = tomatoes.store.file_chunks("garden/a-tomatoes.md")[0].id
    second = tomatoes.store.file_chunks("garden/b-watering.md")[0].id
    assert first < second  # without the tie-break, the rowid would put a-tomatoes first
    query_vector = tomatoes.embedder.embed_query(query)
    closeness = {
        path: tomatoes.vectors.similarities(query_vector, [tomatoes.store.file_chunks(path)[0].embedding_id])
        for path in TOMATO_NOTES
    }
    cosines = {path: next(iter(found.values())) for path, found in closeness.items()}
    assert min(cosines.values()) >= 0.70 and cosines["garden/b-watering.md"] > cosines["garden/a-tomatoes.md"]
    hits = tomatoes.search(query, mode="semantic", group_by_file=group_by_file).hits
    assert [h.score for h in hits] == [1.0, 1.0]
    assert [h.path for h in hits] == ["garden/b-watering.md", "garden/a-tomatoes.md"]
