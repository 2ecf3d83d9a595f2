"""`kb/tags` and `kb/notes` over the real `kbls serve`: tags by use, notes most recently modified
first, paging, filters, nested and several roots, bad params
(tests/userdaemon/test_listings.py: through the per-user daemon).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from pygls.exceptions import JsonRpcException
from tests.support.corpus import make_workspace, write, write_config
from tests.support.lsp_client import LspSession

from kbls.protocol import wire

#: the fixture notes, oldest first: each gets an mtime one hour after the previous one.
BY_AGE = [
    "travel/packing.txt", "cooking/pasta.md", "rust/ownership.md", "travel/japan.md", "meeting-notes.rst",
    "cooking/sourdough.md", "rust/borrowing.md",
]
START = 1_700_000_000


def _age(root: Path, paths: list[str], start: int = START) -> None:
    for i, rel in enumerate(paths):
        stamp = start + 3600 * i
        os.utime(root / rel, (stamp, stamp))


def _notes(session: LspSession, **params: Any) -> wire.NotesResult:
    return msgspec.convert(session.request("kb/notes", params), wire.NotesResult)


def _tags(session: LspSession, **params: Any) -> wire.TagsResult:
    return msgspec.convert(session.request("kb/tags", params), wire.TagsResult)


def _indexed(session: LspSession) -> list[str]:
    """Every note the index holds (a filter-only search lists them, by path)."""
    return [hit.path for hit in session.search("path:**", limit=200, groupByFile=True).hits]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = make_workspace(tmp_path_factory.mktemp("listings"))
    _age(made, BY_AGE)
    return made


@pytest.fixture(scope="module")
def session(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    with LspSession([root], tmp_path_factory.mktemp("listings-logs")) as s:
        s.wait_ready()
        yield s


def test_tags_are_counted_and_ordered_by_use_then_name(session: LspSession) -> None:
    answer = _tags(session)
    assert answer.index.state == "ready"
    pairs = [(t.name, t.count) for t in answer.tags]
    assert pairs[0] == ("rust", 2)
    assert pairs == sorted(pairs, key=lambda p: (-p[1], p[0]))
    assert {"baking", "cooking", "crust", "memory", "travel"} <= {name for name, _ in pairs}
    assert answer.total == len(pairs)


def test_tags_narrow_by_prefix_and_limit(session: LspSession) -> None:
    assert [(t.name, t.count) for t in _tags(session, prefix="ru").tags] == [("rust", 2)]
    assert [t.name for t in _tags(session, prefix="#RU").tags] == ["rust"]  # case and '#' ignored
    assert [t.name for t in _tags(session, prefix="c").tags] == ["cooking", "crust"]
    assert _tags(session, prefix="zz").tags == []
    every = _tags(session)
    cut = _tags(session, limit=2)
    assert [t.name for t in cut.tags] == [t.name for t in every.tags[:2]]
    assert cut.total == every.total > 2


def test_notes_are_listed_most_recently_modified_first(session: LspSession, root: Path) -> None:
    indexed = _indexed(session)
    answer = _notes(session, limit=200)
    paths = [n.path for n in answer.notes]
    assert sorted(paths) == sorted(indexed)  # every note once
    aged = [p for p in reversed(BY_AGE) if p in indexed]
    assert [p for p in paths if p in aged] == aged
    assert answer.total == len(indexed)
    newest = answer.notes[0]
    assert newest.path == "rust/borrowing.md"
    assert newest.uri == (root / "rust/borrowing.md").as_uri()
    assert newest.root == root.as_uri()
    assert newest.title and newest.snippet
    assert newest.tags == ["rust"]
    assert newest.modified == (START + 3600 * 6) * 1000


def test_notes_page_with_offset_and_filter(session: LspSession) -> None:
    every = [n.path for n in _notes(session, limit=200).notes]
    first = _notes(session, limit=2)
    second = _notes(session, limit=2, offset=2)
    assert [n.path for n in first.notes + second.notes] == every[:4]
    assert first.total == second.total == len(every)
    assert _notes(session, limit=5, offset=len(every)).notes == []
    assert _notes(session, limit=5, offset=2**63 - 1).notes == []  # past SQLite's integers: empty
    rust = _notes(session, filters={"tags": ["rust"]})
    assert [n.path for n in rust.notes] == ["rust/borrowing.md", "rust/ownership.md"]
    assert rust.total == 2
    cooking = _notes(session, filters={"paths": ["cooking/**"]})
    assert [n.path for n in cooking.notes] == ["cooking/sourdough.md", "cooking/pasta.md"]


def test_default_limit_is_the_search_limit(session: LspSession) -> None:
    assert len(_notes(session).notes) == min(10, len(_indexed(session)))


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("kb/notes", {"limit": 0}, "limit"),
        ("kb/notes", {"limit": 201}, "limit"),
        ("kb/notes", {"offset": -1}, "offset"),
        ("kb/notes", {"filters": {"paths": ["a/[b"]}}, "a/[b"),
        ("kb/tags", {"limit": 0}, "limit"),
        ("kb/tags", {"prefix": 3}, "prefix"),
    ],
)
def test_bad_params_are_invalid_params(session: LspSession, method: str, params: dict[str, Any], field: str) -> None:
    with pytest.raises(JsonRpcException) as caught:
        session.raw_request(method, params)
    assert caught.value.code == -32602
    assert field in str(caught.value)
    assert _tags(session, prefix="rust").tags  # still answering


def test_a_saved_note_moves_to_the_top(tmp_path: Path) -> None:
    made = make_workspace(tmp_path)
    _age(made, BY_AGE)
    with LspSession([made], tmp_path) as s:
        s.wait_ready()
        assert _notes(s, limit=1).notes[0].path == "rust/borrowing.md"
        assert "salty" not in [t.name for t in _tags(s).tags]  # counted now, so kept until the store changes
        note = made / "cooking/pasta.md"
        note.write_text(note.read_text(encoding="utf-8") + "\nMore salt. #salty\n", encoding="utf-8")
        s.save(note)

        def moved() -> wire.NotesResult | None:
            answer = _notes(s, limit=1)
            return answer if answer.notes and answer.notes[0].path == "cooking/pasta.md" else None

        top = s.wait_for(moved, 60, "the saved note to be listed first").notes[0]
        assert "salty" in top.tags
        assert abs(top.modified / 1000 - time.time()) < 600
        assert ("salty", 1) in [(t.name, t.count) for t in _tags(s).tags]


def test_nested_and_several_roots_list_each_note_once(tmp_path: Path) -> None:
    outer = make_workspace(tmp_path, "outer")
    _age(outer, BY_AGE)
    inner = outer / "rust"
    write_config(inner, store=tmp_path / "rust-kbls")  # rust/ is a root of its own, nested in outer; its store is not
    other = tmp_path / "other"
    write(other, "diary.md", "# Diary\n\ntags: none here #rust #diary\n")
    write_config(other)
    stamp = START + 3600 * 3 + 60  # between japan.md and meeting-notes.rst
    os.utime(other / "diary.md", (stamp, stamp))
    with LspSession([outer, inner, other], tmp_path) as s:
        s.wait_ready()
        answer = _notes(s, limit=200)
        listed = [(n.root, n.path) for n in answer.notes]
        assert len(listed) == len(set(listed)) == answer.total
        rust = [(n.root, n.path) for n in answer.notes if n.path in ("borrowing.md", "ownership.md")]
        assert rust == [(inner.as_uri(), "borrowing.md"), (inner.as_uri(), "ownership.md")]
        assert not [n for n in answer.notes if n.root == outer.as_uri() and n.path.startswith("rust/")]
        order = [n.path for n in answer.notes]
        assert order.index("meeting-notes.rst") < order.index("diary.md") < order.index("travel/japan.md")
        counts = {t.name: t.count for t in _tags(s).tags}
        assert counts["rust"] == 3  # two notes in the nested root, one in the other root; none twice
        assert counts["diary"] == 1
