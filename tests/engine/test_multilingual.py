"""Notes in Chinese, Japanese, Korean, Vietnamese, French and English (tests/fixtures/multilingual,
file names in their scripts): each found by a query in its own script, lexically and in hybrid
mode; CJK text by two characters and by one; diacritics kept; CamelCase identifiers found by
their parts; a store of the schema before the `terms` column migrated without re-embedding."""

from __future__ import annotations

import shutil
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.model import indexed_engine

from kbls.engine import Engine
from kbls.evaluate import evaluate, read_queries
from kbls.indexing.embed import Embedder
from kbls.query.tokens import camel_parts, index_terms, split_cjk

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "multilingual"
QUERIES = FIXTURE / "queries.tsv"


@pytest.fixture(scope="module")
def multilingual(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Engine]:
    base = tmp_path_factory.mktemp("multi lingual é")
    shutil.copytree(FIXTURE, base / "notes", ignore=shutil.ignore_patterns("*.tsv"))
    engine = Engine(base / "notes", store_dir=base / "store", embedder=embedder)
    engine.index()
    yield engine
    engine.close()


def test_cjk_runs_become_bigrams_and_identifiers_their_parts() -> None:
    assert split_cjk("東京都") == ["東京", "京都"]
    assert split_cjk("東京tower") == ["東京", "tower"]
    assert split_cjk("故") == ["故"]
    assert camel_parts("a BatchSpanProcessor, HTTPServer; JSON and Hello stay") == [
        "batch", "span", "processor", "http", "server",
    ]
    assert index_terms("# 京都の旅", "useSpanProcessor") == "use span processor 京都 都の の旅"
    # a word written against CJK text is inside the CJK run's unicode61 token: it needs its own
    assert index_terms("使用Redis缓存", "kubectlでpodを見る") == "Redis kubectl pod 使用 缓存 で を見 見る"
    assert index_terms("用BatchSpanProcessor导出") == "batch span processor BatchSpanProcessor 用 导出"


def test_words_glued_to_cjk_text_are_found(tmp_path: Path, embedder: Embedder) -> None:
    notes = {
        "缓存.md": "# 缓存\n\n我们使用Redis缓存会话。\n",
        "k8s.md": "# 運用\n\nkubectlでpodを見る。BatchSpanProcessorで送る。\n",
    }
    engine = indexed_engine(tmp_path, notes, embedder)
    try:
        found = [("redis", "缓存.md"), ("kubectl pod", "k8s.md"), ("BatchSpanProcessor", "k8s.md"), ("span processor", "k8s.md")]
        for query, path in found:
            assert [h.path for h in engine.search(query, mode="lexical", group_by_file=True).hits][:1] == [path], query
    finally:
        engine.close()


@pytest.mark.parametrize(("query", "relevant"), read_queries(QUERIES), ids=[q for q, _ in read_queries(QUERIES)])
@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_each_query_finds_its_note_first(multilingual: Engine, query: str, relevant: list[str], mode: str) -> None:
    hits = multilingual.search(query, mode=mode, group_by_file=True).hits
    assert [h.path for h in hits][:1] == relevant[:1], [(h.path, h.score) for h in hits]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("长城", "zh/北京旅行.md"), ("訓練", None), ("训练", "zh/机器学习笔记.md"), ("北", "zh/北京旅行.md"),
        ("寺", "ja/京都の旅.md"),
    ],
)
def test_two_characters_and_one_are_enough(multilingual: Engine, query: str, expected: str | None) -> None:
    """A two-character word is one bigram; a single character is looked for at a bigram's
    start; traditional 訓練 is not simplified 训练 (no note holds it)."""
    paths = [h.path for h in multilingual.search(query, mode="lexical", group_by_file=True).hits]
    assert paths[:1] == ([expected] if expected else []), paths


def test_vietnamese_and_french_keep_their_diacritics(multilingual: Engine) -> None:
    def lexical(query: str) -> list[str]:
        return [h.path for h in multilingual.search(query, mode="lexical", group_by_file=True).hits]

    assert lexical("thuế") == ["vi/thuế thu nhập.md"]  # tax
    assert lexical("thuê") == ["vi/thuê xe máy.md"]  # rent
    assert lexical("thue") == []
    assert lexical("résumé") == ["fr/résumé.md"]
    assert lexical("resume") == ["en/downloads.md"]


def test_the_fixture_figures(multilingual: Engine) -> None:
    """The figures docs/benchmarks.md quotes for this fixture: every query's note first."""
    report = evaluate(multilingual, QUERIES, k=10, modes=("lexical", "hybrid"))
    assert {m.mode: round(m.mrr, 3) for m in report.modes} == {"lexical": 1.0, "hybrid": 1.0}


NOTES = {
    "tracing.md": """
        # Tracing setup

        Register a BatchSpanProcessor with the provider and point it at the collector through
        OTEL_EXPORTER_OTLP_ENDPOINT. Set service.name, and deploy kube-state-metrics beside it.
        """,
    "other.md": """
        # Logging

        Write logs to a file and rotate them weekly.
        """,
}


@pytest.fixture(scope="module")
def identifiers(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Engine]:
    engine = indexed_engine(tmp_path_factory.mktemp("identifiers"), NOTES, embedder)
    yield engine
    engine.close()


@pytest.mark.parametrize(
    "query",
    [
        "BatchSpanProcessor", "batchspanprocessor", "span processor", "OTEL_EXPORTER_OTLP_ENDPOINT", "otlp endpoint",
        "service.name", "kube-state-metrics", "kube state metrics",
    ],
)
def test_identifiers_are_found_as_wholes_and_by_their_parts(identifiers: Engine, query: str) -> None:
    hits = identifiers.search(query, mode="lexical", group_by_file=True).hits
    assert [h.path for h in hits] == ["tracing.md"]
    assert hits[0].score == pytest.approx(1.0), hits[0]  # every word of the query found


def test_a_store_without_the_terms_column_is_migrated_and_re_embeds_nothing(tmp_path: Path, embedder: Embedder) -> None:
    engine = indexed_engine(tmp_path, NOTES, embedder)
    with engine.store.db.atomic() as c:  # the FTS table and schema version of the store before
        rows = c.execute("SELECT rowid, title, breadcrumb, body FROM chunks_fts").fetchall()
        c.execute("DROP TABLE chunks_fts")
        c.execute(
            "CREATE VIRTUAL TABLE chunks_fts USING fts5(title, breadcrumb, body, tokenize = 'unicode61 remove_diacritics 0')"
        )
        c.executemany("INSERT INTO chunks_fts(rowid, title, breadcrumb, body) VALUES (?, ?, ?, ?)", rows)
        c.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    engine.close()
    migrated = Engine(tmp_path / "notes", store_dir=tmp_path / "store", embedder=embedder)
    try:
        assert migrated.notice is None
        assert [h.path for h in migrated.search("span processor", mode="lexical").hits] == ["tracing.md"]
        assert migrated.index().embedded == 0
    finally:
        migrated.close()


def test_composed_and_decomposed_accents_find_each_other(tmp_path: Path, embedder: Embedder) -> None:
    """A note saved with decomposed accents (e + U+0301, as macOS writes file names) is found by
    the word typed composed, and a composed note by a decomposed query; accents still count."""
    decomposed = unicodedata.normalize("NFD", "Mon résumé liste chaque poste depuis 2010.")
    composed = "Le café ferme à midi."
    engine = indexed_engine(
        tmp_path, {unicodedata.normalize("NFD", "cv/résumé.md"): decomposed, "lunch.md": composed}, embedder
    )
    try:
        def lexical(query: str) -> list[str]:
            return [h.path for h in engine.search(query, mode="lexical", group_by_file=True).hits]

        assert lexical("résumé") == [unicodedata.normalize("NFD", "cv/résumé.md")]
        assert lexical(unicodedata.normalize("NFD", "café")) == ["lunch.md"]
        assert lexical("resume") == [] and lexical("cafe") == []
        hit = engine.search("résumé", mode="lexical").hits[0]
        assert hit.score == pytest.approx(1.0)  # the word found in the text, not only by FTS
    finally:
        engine.close()
