"""A team store is a database others write: a row whose path leaves the root (written there with
SQL, not by kbls) is never handed out by search, listings, links, names or related notes; and a
workspace's own `.kbls.yaml` makes kbls connect to one only on a host the user trusts."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from kbls.engine import Engine
from kbls.errors import ConfigError
from kbls.query.filters import Filters
from kbls.storage.postgres.location import PgLocation, store_host
from kbls.storage.postgres.paths import clean_path, clean_path_sql

BAD = {"rust/borrowing.md": "../../x.md", "cooking/sourdough.md": "/etc/bread.md", "meeting-notes.rst": "a\\..\\b.rst"}


PATHS = [
    ("rust/ownership.md", True),
    ("Notés/a #1 [x] 100%.md", True),
    ("..notes/a.md", True),
    ("../../x.md", False),
    ("a/../../x.md", False),
    ("/etc/passwd", False),
    ("a\\b.md", False),
    ("a\x00.md", False),
    ("", False),
    ("a//b.md", False),
    ("./a.md", False),
    ("C:/x.md", False),
    ("C:", False),
    ("C:x.md", True),
    ("a/.", False),
    ("a/...", True),
    ("a/", False),
    (None, False),
]


@pytest.mark.parametrize(("path", "clean"), PATHS)
def test_clean_path(path: object, clean: bool) -> None:
    assert clean_path(path) is clean


def test_clean_path_in_sql_agrees(pg_url: str) -> None:
    """The condition totals are counted with keeps the paths `clean_path` keeps (text holds no NUL)."""
    cases = [c for c in PATHS if isinstance(c[0], str) and "\x00" not in c[0]]
    values = ", ".join(["(%s)"] * len(cases))
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            f"SELECT p, {clean_path_sql('p')} FROM (VALUES {values}) AS t(p)", [path for path, _ in cases]
        ).fetchall()
    assert dict(rows) == dict(cases)


def test_rows_outside_the_root_are_left_out(
    vault: Path, pg_url: str, open_engine: Callable[..., Engine], caplog: pytest.LogCaptureFixture
) -> None:
    assert (vault / "cooking" / "sourdough.md").is_file()
    open_engine(vault, pg_url, ingest=True).index()
    team = open_engine(vault, pg_url)
    tags_before = dict(team.store.tag_counts())
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for (tag,) in conn.execute(
            "SELECT t.tag FROM tags t JOIN files f ON f.id = t.file_id WHERE f.path = ANY(%s)", (list(BAD),)
        ):
            tags_before[tag] -= 1
        for good, bad in BAD.items():
            assert conn.execute("UPDATE files SET path = %s WHERE path = %s", (bad, good)).rowcount == 1
    bad_paths = set(BAD.values())
    with caplog.at_level(logging.WARNING, logger="kbls.storage.postgres.paths"):
        for query in ("mutable reference borrow", "bread dough", "meeting", "borrowing"):
            for mode in ("lexical", "semantic", "hybrid"):
                paths = {h.path for h in team.search(query, limit=20, mode=mode).hits}
                assert not paths & bad_paths, (query, mode)
        assert {h.path for h in team.search("who owns a value", mode="hybrid").hits} >= {"rust/ownership.md"}
        listed, total = team.listing.recent(Filters(), 50)
        assert listed and not {f.path for f in listed} & bad_paths
        assert total == len(listed) == 7 - len(BAD)  # the total counts what is listed
        assert team.store.counts().files == total  # the status bar's count too
        assert team.listing.recent(Filters(tags=("rust",)), 50)[1] == 1  # borrowing.md's row is out
        assert {t.name: t.count for t in team.listing.tags()} == {k: n for k, n in tags_before.items() if n}
        assert not {n.path for n in team.store.note_names()} & bad_paths
        assert team.store.note_names()
        assert not {s.path for s in team.store.links_to(["rust/ownership.md", "ownership"])} & bad_paths
        assert not {s.path for s in team.store.every_link()} & bad_paths
        assert not {t.path for t in team.store.tag_uses("rust")} & bad_paths
        assert team.store.file_info("../../x.md") is None
        assert not set(team.store.files()) & bad_paths and team.store.files()
        related = {h.path for h in team.related(vault / "rust" / "ownership.md")}
        assert not related & bad_paths
    warnings = [r for r in caplog.records if "not inside its root" in r.getMessage()]
    assert len(warnings) == 1 and team.store.location in warnings[0].getMessage()


def test_link_targets_are_checked_as_paths_are(
    vault: Path, pg_url: str, open_engine: Callable[..., Engine], caplog: pytest.LogCaptureFixture
) -> None:
    """A link row rewritten with SQL: a look-up key kbls would not make of the target, or a path
    target outside the root, is left out as a path outside the root is."""
    open_engine(vault, pg_url, ingest=True).index()
    team = open_engine(vault, pg_url)
    note = "rust/ownership.md"
    (link,) = [s.link for s in team.store.links_of(note)]
    assert link.target == "Borrowing"
    file_id = team.store.file_info(note).id  # type: ignore[union-attr]
    assert team.store.outgoing_links(file_id) == [("wiki", "borrowing")]
    every = len(team.store.every_link())
    with psycopg.connect(pg_url, autocommit=True) as conn:
        # a path link under `../../etc` as the SQL of `links_under` finds it: only the key check drops it
        conn.execute("UPDATE link_spans SET kind = 'path', target_key = '../../etc/x.md' WHERE file_id = %s", (file_id,))
        raw = conn.execute(
            "SELECT count(*) FROM link_spans WHERE kind = 'path' AND target_key >= '../../etc/' AND target_key < '../../etc0'"
        ).fetchone()
        assert raw == (1,)
        conn.execute("UPDATE links SET kind = 'path', target = '../../x.md' WHERE file_id = %s", (file_id,))
        conn.execute("UPDATE files SET path = '../../x.md' WHERE path = 'rust/borrowing.md'")
    with caplog.at_level(logging.WARNING, logger="kbls.storage.postgres.paths"):
        assert team.store.links_of(note) == []
    assert "look-up key kbls would not make" in caplog.text  # said, not dropped silently
    assert every == 2 and team.store.every_link() == []  # borrowing.md's own link went with its path
    assert team.store.links_to(["../../etc/x.md"]) == [] and team.store.links_under(["../../etc"]) == []
    assert team.store.outgoing_links(file_id) == []
    related = team.related(vault / note)
    assert all(h.path != "../../x.md" and "linked from here" not in h.reasons for h in related)


def test_a_workspace_names_a_team_store_only_with_consent(
    vault: Path, pg_url: str, open_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    open_engine(vault, pg_url, ingest=True).index()
    (vault / ".kbls.yaml").write_text(f"store: {pg_url}\n", encoding="utf-8")
    monkeypatch.delenv("KBLS_TRUSTED_STORES", raising=False)
    host = store_host(pg_url)
    with pytest.raises(ConfigError, match=f"KBLS_TRUSTED_STORES={re.escape(host)}"):
        open_engine(vault, None)
    monkeypatch.setenv("KBLS_TRUSTED_STORES", host)
    team = open_engine(vault, None)
    assert team.team and team.store.location == PgLocation.parse(pg_url, vault, "store").display
    assert "rust/ownership.md" in {h.path for h in team.search("who owns a value", mode="hybrid").hits}
