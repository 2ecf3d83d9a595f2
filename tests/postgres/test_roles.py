"""The store's roles on both backends: the same notes indexed into SQLite and into PostgreSQL
answer every engine query the same way (search in each mode and with each filter, related
notes, links, tags, listings, status), and a note changed or deleted changes both alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbls.engine import Engine
from kbls.errors import StoreReadOnlyError
from kbls.query.filters import Filters

QUERIES = [
    "who owns a value after it is moved",
    "mutable reference borrow",
    "bread dough",
    "packing list for a trip",
    "tagliatelle",
    "ownersh",  # a prefix still being typed
]
FILTERED = [
    ("reference", Filters(paths=("rust/**",))),
    ("value", Filters(tags=("memory",))),
    ("owner", Filters(types=("concept",))),
    ("water", Filters(types=("md",))),
    ("meeting", Filters(types=("rst",))),
    ("dough", Filters(paths=("*.md",), tags=("rust",))),
]


def _hits(engine: Engine, query: str, mode: str, filters: Filters | None = None) -> list[tuple[str, int, float]]:
    hits = engine.search(query, limit=10, mode=mode, filters=filters).hits
    return [(h.path, h.start_line, round(h.score, 4)) for h in hits]


@pytest.fixture
def both(vault: Path, tmp_path: Path, pg_url: str, open_engine: Callable[..., Engine]) -> tuple[Engine, Engine]:
    sqlite = open_engine(vault, tmp_path / "sqlite-store")
    sqlite.index()
    writer = open_engine(vault, pg_url, ingest=True)
    report = writer.index()
    assert (report.files, report.chunks) == (sqlite.store.counts().files, sqlite.store.counts().chunks)
    return sqlite, open_engine(vault, pg_url)


@pytest.mark.parametrize("mode", ["lexical", "semantic", "hybrid"])
def test_searches_rank_alike(both: tuple[Engine, Engine], mode: str) -> None:
    sqlite, team = both
    answered = 0
    for query in QUERIES:
        expected = _hits(sqlite, query, mode)
        answered += bool(expected)
        assert _hits(team, query, mode) == expected, query
    assert answered >= len(QUERIES) - 1  # semantic search finds nothing for a word half typed


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_filters_are_applied_in_sql_alike(both: tuple[Engine, Engine], mode: str) -> None:
    sqlite, team = both
    for query, filters in FILTERED:
        assert _hits(team, query, mode, filters) == _hits(sqlite, query, mode, filters), (query, filters)
    assert _hits(team, "value", mode, Filters(tags=("memory",)))  # the filter keeps something
    assert not _hits(team, "dough", mode, Filters(paths=("*.md",), tags=("rust",)))


def test_filters_only(both: tuple[Engine, Engine]) -> None:
    sqlite, team = both
    for filters in (Filters(tags=("rust",)), Filters(paths=("travel/*",)), Filters(types=("txt",))):
        expected = [h.path for h in sqlite.search("", filters=filters, mode="hybrid").hits]
        assert expected and [h.path for h in team.search("", filters=filters, mode="hybrid").hits] == expected


def test_links_tags_and_related(both: tuple[Engine, Engine], vault: Path) -> None:
    sqlite, team = both
    for engine in both:
        assert engine.store.note_names() and engine.store.tag_counts()
    assert [(n.path, n.title, n.aliases) for n in team.store.note_names()] == [
        (n.path, n.title, n.aliases) for n in sqlite.store.note_names()
    ]
    assert sorted(team.store.tag_counts()) == sorted(sqlite.store.tag_counts())
    assert team.store.tag_counts("mem") == [("memory", 1)]
    keys = ["rust/ownership.md", "borrowing"]
    links = [(s.path, s.link.target, s.link.span) for s in sqlite.store.links_to(keys)]
    assert {path for path, _, _ in links} == {"rust/borrowing.md", "rust/ownership.md"}
    assert [(s.path, s.link.target, s.link.span) for s in team.store.links_to(keys)] == links
    assert [s.link for s in team.store.links_of("rust/ownership.md")] == [
        s.link for s in sqlite.store.links_of("rust/ownership.md")
    ]
    assert [s.link for s in team.store.links_under(["rust"])] == [s.link for s in sqlite.store.links_under(["rust"])]
    assert [(t.path, t.tag.tag) for t in team.store.tag_uses("rust")] == [
        (t.path, t.tag.tag) for t in sqlite.store.tag_uses("rust")
    ]
    note = vault / "rust" / "ownership.md"
    related = [(h.path, round(h.score, 4)) for h in team.related(note)]
    assert related and related == [(h.path, round(h.score, 4)) for h in sqlite.related(note)]
    assert team.listing.tags() == sqlite.listing.tags()
    for filters in (Filters(), Filters(tags=("rust",)), Filters(paths=("cooking/**",))):
        listed, total = sqlite.listing.recent(filters, 10)
        team_listed, team_total = team.listing.recent(filters, 10)
        assert total and team_total == total
        assert [(f.path, f.title) for f in team_listed] == [(f.path, f.title) for f in listed]
        assert team.listing.summaries(team_listed) == sqlite.listing.summaries(listed)


def test_status_names_the_team_store(both: tuple[Engine, Engine], pg_url: str) -> None:
    sqlite, team = both
    status = team.status()
    assert (status.files, status.chunks) == (sqlite.status().files, sqlite.status().chunks)
    assert status.sqlite.module == "postgresql" and status.sqlite.vec.startswith("pgvector 0.")
    assert status.store.startswith(pg_url.split("?")[0]) and "root handbook" in status.store


def test_a_changed_and_a_deleted_note(both: tuple[Engine, Engine], vault: Path, pg_url: str, open_engine) -> None:
    sqlite, team = both
    counted_before = team.store.counts()  # kept by the reader until a write moves the root's revision
    writer = open_engine(vault, pg_url, ingest=True)
    (vault / "cooking" / "pasta.md").write_text("# Fresh pasta\n\nSemolina gnocchi with sage butter.\n", encoding="utf-8")
    (vault / "travel" / "packing.txt").unlink()
    for engine in (sqlite, writer):
        report = engine.index()
        assert (report.changed, report.deleted) == (1, 1)
    for mode in ("lexical", "hybrid"):
        assert _hits(team, "semolina gnocchi", mode) == _hits(sqlite, "semolina gnocchi", mode)
        assert _hits(team, "semolina gnocchi", mode)[0][0] == "cooking/pasta.md"
        assert not [h for h in _hits(team, "packing", mode) if h[0] == "travel/packing.txt"]
    assert team.store.counts() == sqlite.store.counts() != counted_before


def test_a_reader_counts_again_only_after_a_write(both: tuple[Engine, Engine], monkeypatch: pytest.MonkeyPatch) -> None:
    """The status bar's counts walk every chunk of the root: a reader asking again after a save
    (which writes nothing) gets them without that walk."""
    _, team = both
    first = team.store.counts()
    asked: list[str] = []
    one = team.store.db.one
    monkeypatch.setattr(team.store.db, "one", lambda sql, *args, **kw: asked.append(sql) or one(sql, *args, **kw))
    assert team.store.counts() == first
    assert asked and not [sql for sql in asked if "count(" in sql], asked


def test_a_reader_never_writes(both: tuple[Engine, Engine], vault: Path) -> None:
    """A reader's `index` (the daemon's scan of a root it opens, a save) writes and embeds nothing."""
    sqlite, team = both
    assert team.read_only
    (vault / "cooking" / "pasta.md").write_text("# Fresh pasta\n\nSemolina gnocchi.\n", encoding="utf-8")
    report = team.index()
    assert (report.changed, report.deleted, report.embedded) == (0, 0, 0) and team.embedded_total == 0
    assert (report.files, report.chunks) == (sqlite.store.counts().files, sqlite.store.counts().chunks)
    assert not team.search("semolina gnocchi", mode="lexical").hits
    with pytest.raises(StoreReadOnlyError, match="ingest worker"):
        team.embed_pending()
