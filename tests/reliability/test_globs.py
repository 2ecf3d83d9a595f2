"""Issue 6, hostile protocol input, and issue 9, one glob dialect.

Path filters (`filters.paths`, `path:` in a query) are globs; a filter like
`**/*?*?*?*?*?*?*?*?*?*?x` once made Python's regex engine try every split of each path
(catastrophic backtracking) and hung the daemon's search thread. The globs must match in bounded
time, and mean exactly what the same line means in `.kbls.yaml` include/exclude and in a
`.gitignore`: pathspec's GitIgnoreSpec is the oracle.
"""

from __future__ import annotations

import time
from pathlib import Path

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygls.exceptions import JsonRpcException
from tests.support.corpus import write, write_config
from tests.support.lsp_client import LspSession
from tests.support.processes import assert_no_traceback, run_kbls

from kbls.errors import QueryError
from kbls.query.globs import check_glob, filter_pattern, glob_matches


def oracle(pattern: str, path: str) -> bool:
    """What the same pattern means as the only line of a `.gitignore` (pathspec, re engine)."""
    return pathspec.GitIgnoreSpec.from_lines([filter_pattern(pattern)], backend="simple").match_file(path)


pieces = ["a", "b", "/", "*", "?", "**", "**/", "/**", "[ab]", "[!a]"]
globs = st.lists(st.sampled_from(pieces), min_size=1, max_size=8).map("".join).filter(lambda g: g.strip("/"))
paths = st.lists(st.sampled_from(["a", "b", "c", "/"]), min_size=1, max_size=10).map("".join).filter(
    lambda p: p.strip("/") and "//" not in p and not p.startswith("/") and not p.endswith("/")
)


@settings(max_examples=3000, deadline=None)
@given(pattern=globs, path=paths)
def test_path_filters_mean_what_gitignore_means(pattern: str, path: str) -> None:
    assert glob_matches(pattern, path) == oracle(pattern, path)


@settings(max_examples=300, deadline=None)
@given(pattern=st.lists(st.sampled_from(["*a", "*?", "**", "**/", "a", "?"]), min_size=4, max_size=12).map("".join),
       path=paths)
def test_patterns_sent_to_re2_mean_the_same(pattern: str, path: str) -> None:
    """Patterns with many wildcards are matched by RE2: same answers as the oracle."""
    assert glob_matches(pattern, path) == oracle(pattern, path)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("notes/[ab].md", "notes/a.md", True),  # a character class (was taken literally)
        ("notes/[ab].md", "notes/c.md", False),
        ("notes", "notes/a.md", True),
        ("notes", "work/notes/a.md", True),  # a bare name matches at any depth, as in .gitignore
        ("/notes", "work/notes/a.md", False),  # a leading slash anchors at the root
        ("notes/", "notes/a.md", True),
        ("travel/**", "travel/japan/kyoto.md", True),
        ("*.md", "deep/er/x.md", True),
        ("rust/*.md", "rust/sub/x.md", False),  # `*` stays inside one folder
        ("**/2024/*.md", "a/b/2024/x.md", True),
        ("./notes", "notes/a.md", True),
        ("!draft.md", "!draft.md", True),  # a filter has no negation: `!` is literal
    ],
)
def test_the_dialect_on_the_cases_of_issue_9(pattern: str, path: str, expected: bool) -> None:
    assert glob_matches(pattern, path) is expected


@pytest.mark.parametrize("pattern", ["notes/[ab", "notes/[z-a].md"])
def test_an_invalid_glob_is_a_query_error(pattern: str) -> None:
    """`[z-a]` passes pathspec and fails in `re` (re.error: a traceback before)."""
    with pytest.raises(QueryError, match="not a valid glob"):
        check_glob(pattern)


def test_kbls_search_with_a_bad_range_in_a_path_filter_exits_2(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    write(root, "notes/a.md", "# A\n\nSome text.\n")
    done = run_kbls(["search", "path:notes/[z-a].md text", "--root", str(root), "--store", str(tmp_path / "s")], tmp_path)
    assert_no_traceback(done)
    assert done.returncode == 2, done.stderr
    assert "path filter 'notes/[z-a].md' is not a valid glob" in done.stderr, done.stderr


def test_kb_search_with_a_bad_range_in_a_path_filter_is_an_invalid_params_error(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    write(root, "notes/a.md", "# A\n\nSome text.\n")
    write_config(root)
    with LspSession([root], tmp_path) as daemon:
        daemon.wait_ready()
        for params in ({"query": "path:notes/[z-a].md text"}, {"query": "text", "filters": {"paths": ["notes/[z-a].md"]}}):
            with pytest.raises(JsonRpcException, match="not a valid glob") as raised:
                daemon.request("kb/search", params)
            assert raised.value.code == -32602, raised.value
        assert daemon.alive() and daemon.search("some text").hits, daemon.log_tail()


def test_a_backtracking_bomb_of_a_filter_matches_in_bounded_time() -> None:
    path = "d3/notes-about-the-quarterly-planning-of-the-eleventh-year-2024.md"
    for pattern in ("**/" + "*?" * 12 + "x", "*a" * 14 + "*b", "**e" * 10 + "**x", "**/" + "*e" * 12 + "x"):
        started = time.perf_counter()
        glob_matches(pattern, path)
        glob_matches(pattern, "a" * 200 + ".md")
        glob_matches(pattern, "e/" * 100 + "e" * 200 + ".md")
        assert time.perf_counter() - started < 0.5, pattern
    # Two wildcards stay on Python's `re`: quadratic in one folder name (at most 255 bytes).
    started = time.perf_counter()
    for pattern in ("*a*b", "**/*a*b", "a/**/*a*b"):
        assert not glob_matches(pattern, "a/" * 100 + "a" * 255)
    assert time.perf_counter() - started < 0.5
