"""Search with the real model: modes, filters (query syntax and structured), filters applied
before top-k, grouping by file, and what a hit carries."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest
from tests.support.corpus import write

from kbls.config import Config, SearchConfig
from kbls.engine import Engine
from kbls.errors import QueryError
from kbls.query.filters import Filters


# -- quality on a small corpus ---------------------------------------------------------------
@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("who owns a value after it is moved", "rust/ownership.md"),
        ("bullet train ticket", "travel/japan.md"),
        ("what to bring on a long journey", "travel/packing.txt"),
        ("bread made with a natural leaven", "cooking/sourdough.md"),
        ("moving servers to another datacenter", "meeting-notes.rst"),
    ],
)
def test_the_right_note_comes_first(kb, mode, query, expected):
    hits = kb.search(query, mode=mode, limit=3, group_by_file=True).hits
    assert hits[0].path == expected, [h.path for h in hits]


@pytest.fixture(scope="module")
def kb_unfloored(kb: Engine) -> Iterator[Engine]:
    """The `kb` store searched with the relevance floor off (`search.min_score: 0`)."""
    engine = Engine(
        kb.root, config=Config(search=SearchConfig(min_score=0.0)), store_dir=kb.store_dir, embedder=kb.embedder
    )
    yield engine
    engine.close()


def test_lexical_finds_an_exact_identifier(kb):
    hits = kb.search("tagliatelle", mode="lexical").hits
    assert [h.path for h in hits] == ["cooking/pasta.md"]


def test_each_mode_reports_its_own_signals(kb):
    semantic = kb.search("memory is freed when the owner goes out of scope", mode="semantic").hits
    lexical = kb.search("memory is freed when the owner goes out of scope", mode="lexical").hits
    hybrid = kb.search("memory is freed when the owner goes out of scope", mode="hybrid").hits
    assert semantic and all(h.signals.semantic and h.signals.lexical is None for h in semantic)
    assert lexical and all(h.signals.lexical and h.signals.semantic is None for h in lexical)
    assert hybrid[0].signals.semantic and hybrid[0].signals.lexical
    assert [h.score for h in hybrid] == sorted((h.score for h in hybrid), reverse=True)


def test_a_hit_carries_path_lines_breadcrumb_snippet_score_and_signals(kb):
    hit = kb.search("only one mutable reference at a time", limit=1).hits[0]
    data = msgspec.to_builtins(hit)
    assert {"path", "start_line", "end_line", "breadcrumb", "snippet", "score", "signals"} <= set(data)
    assert hit.path == "rust/borrowing.md" and hit.breadcrumb.startswith("Borrowing")
    lines = (kb.root / hit.path).read_text().split("\n")
    window = " ".join(lines[hit.start_line : hit.end_line + 1])
    assert "one mutable reference" in hit.snippet
    assert all(word in window for word in hit.snippet.rstrip("…").split()[:-1])
    assert lines[hit.start_line].strip() and lines[hit.end_line].strip()


def test_group_by_file_returns_one_hit_per_file_and_counts_the_rest(kb):
    plain = kb.search("lifetimes of references", limit=10, mode="lexical").hits
    grouped = kb.search("lifetimes of references", limit=10, mode="lexical", group_by_file=True).hits
    assert len({h.path for h in grouped}) == len(grouped)
    lifetimes = next(h for h in grouped if h.path == "rust/lifetimes.md")
    assert lifetimes.more == sum(1 for h in plain if h.path == "rust/lifetimes.md") - 1 >= 1


def test_bad_mode_and_limit_are_query_errors(kb):
    with pytest.raises(QueryError, match="mode"):
        kb.search("x", mode="fuzzy")
    with pytest.raises(QueryError, match="limit"):
        kb.search("x", limit=0)


def test_an_empty_query_finds_nothing(kb):
    assert kb.search("   ").hits == [] and kb.search("").hits == []


def test_a_query_of_only_filters_lists_the_matching_notes(kb):
    hits = kb.search("tag:rust").hits
    assert sorted(h.path for h in hits) == ["rust/borrowing.md", "rust/ownership.md"]
    assert sorted(h.path for h in kb.search("", filters=Filters(types=("rst",))).hits) == ["meeting-notes.rst"]


def test_fts_syntax_in_a_query_is_not_an_error(kb):
    for query in ['"unbalanced', "a AND OR NOT", "col:on*", "(((", "NEAR(x y)", "*"]:
        kb.search(query, mode="lexical")
        kb.search(query)


# -- filters ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "filters", "paths"),
    [
        ("tag:rust references", None, {"rust/ownership.md", "rust/borrowing.md"}),
        ("references", Filters(tags=("rust",)), {"rust/ownership.md", "rust/borrowing.md"}),
        ("tag:#Rust tag:memory value", None, {"rust/ownership.md"}),
        ("path:travel trip", None, {"travel/japan.md", "travel/packing.txt"}),
        ("trip", Filters(paths=("travel/**",)), {"travel/japan.md", "travel/packing.txt"}),
        ('path:"**/*.txt" trip', None, {"travel/packing.txt"}),
        ("type:recipe bread", None, {"cooking/sourdough.md"}),
        ("bread", Filters(types=("recipe",)), {"cooking/sourdough.md"}),
        ("type:rst plans", None, {"meeting-notes.rst"}),
        ("type:concept references", Filters(tags=("rust",)), {"rust/ownership.md"}),
    ],
)
@pytest.mark.parametrize("mode", ["hybrid", "semantic", "lexical"])
def test_filters_as_query_syntax_and_as_structured_filters(kb, kb_unfloored, query, filters, paths, mode):
    hits = kb.search(query, filters=filters, mode=mode, limit=20, group_by_file=True).hits
    assert {h.path for h in hits} <= paths  # the relevance floor may drop some, never add
    hits = kb_unfloored.search(query, filters=filters, mode=mode, limit=20, group_by_file=True).hits
    found = {h.path for h in hits}
    assert found <= paths
    if mode != "lexical":  # lexical needs a shared word; without a floor semantic ranks every allowed chunk
        assert found == paths


CROWD = 60


@pytest.fixture(scope="module")
def crowded(tmp_path_factory, embedder) -> Engine:
    """60 notes that all rank above one rare note for the query, in every mode."""
    base = tmp_path_factory.mktemp("crowd")
    for i in range(CROWD):
        write(base / "notes", f"crowd/note{i:02}.md", f"""
            ---
            tags: [common]
            ---
            # Borrow checker lifetimes {i}

            The borrow checker verifies lifetimes of borrows, case {i}: borrow checker lifetimes
            errors such as E0{500 + i} explain which borrow outlives which lifetime.
            """)
    write(base / "notes", "rare/garden.md", """
        ---
        tags: [rare]
        type: howto
        ---
        # Tomato garden

        Water the tomatoes every evening and stake them early. Unrelated aside: a friend
        complained about the borrow checker.
        """)
    engine = Engine(base / "notes", store_dir=base / "store", embedder=embedder)
    engine.index()
    yield engine
    engine.close()


QUERY = "borrow checker lifetimes"


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "lexical"])
def test_the_rare_note_ranks_below_the_crowd_without_a_filter(crowded, mode):
    """Makes the next test meaningful: unfiltered, the rare note is beyond the candidate pool."""
    paths = [h.path for h in crowded.search(QUERY, mode=mode, limit=200).hits]
    assert "rare/garden.md" not in paths[:CROWD - 5]


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "lexical"])
@pytest.mark.parametrize(
    ("query", "filters"),
    [
        (f"tag:rare {QUERY}", None),
        (QUERY, Filters(tags=("rare",))),
        (f"path:rare/** {QUERY}", None),
        (QUERY, Filters(paths=("rare",))),
        (f"type:howto {QUERY}", None),
        (QUERY, Filters(types=("howto",))),
    ],
)
def test_filters_apply_before_top_k(crowded, mode, query, filters):
    hits = crowded.search(query, filters=filters, mode=mode, limit=5).hits
    assert [h.path for h in hits] == ["rare/garden.md"]
