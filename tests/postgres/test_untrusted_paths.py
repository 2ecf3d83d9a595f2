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
from kbls.storage.postgres.paths import clean_path

BAD = {"rust/borrowing.md": "../../x.md", "cooking/sourdough.md": "/etc/bread.md", "meeting-notes.rst": "a\\..\\b.rst"}


@pytest.mark.parametrize(
    ("path", "clean"),
    [
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
        (None, False),
    ],
)
def test_clean_path(path: object, clean: bool) -> None:
    assert clean_path(path) is clean


def test_rows_outside_the_root_are_left_out(
    vault: Path, pg_url: str, open_engine: Callable[..., Engine], caplog: pytest.LogCaptureFixture
) -> None:
    assert (vault / "cooking" / "sourdough.md").is_file()
    open_engine(vault, pg_url, ingest=True).index()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for good, bad in BAD.items():
            assert conn.execute("UPDATE files SET path = %s WHERE path = %s", (bad, good)).rowcount == 1
    team = open_engine(vault, pg_url)
    bad_paths = set(BAD.values())
    with caplog.at_level(logging.WARNING, logger="kbls.storage.postgres.paths"):
        for query in ("mutable reference borrow", "bread dough", "meeting", "borrowing"):
            for mode in ("lexical", "semantic", "hybrid"):
                paths = {h.path for h in team.search(query, limit=20, mode=mode).hits}
                assert not paths & bad_paths, (query, mode)
        assert {h.path for h in team.search("who owns a value", mode="hybrid").hits} >= {"rust/ownership.md"}
        listed, _ = team.listing.recent(Filters(), 50)
        assert listed and not {f.path for f in listed} & bad_paths
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
