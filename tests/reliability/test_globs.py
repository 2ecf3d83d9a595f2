"""Issue 6, hostile protocol input: path filters (`filters.paths`, `path:` in a query) are
globs compiled to regexes; a filter like `**/*?*?*?*?*?*?*?*?*?*?x` made Python's regex engine
try every split of each path (catastrophic backtracking) and hung the daemon's search thread.
The globs must keep their meaning and match in bounded time.
"""

from __future__ import annotations

import functools
import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from kbls.query.globs import glob_to_regex


def reference_match(pattern: str, path: str) -> bool:
    """The documented glob meaning, by plain recursion: `*` any run without `/`, `?` one
    character but `/`, `**/` nothing or whole folders, `**` anything; a pattern without `/`
    matches at any depth, as in .gitignore (`*.md` is `**/*.md`)."""
    if "/" not in pattern:
        pattern = "**/" + pattern

    @functools.cache
    def match(p: int, s: int) -> bool:
        if p == len(pattern):
            return s == len(path)
        if pattern.startswith("**/", p):
            return match(p + 3, s) or any(match(p + 3, e + 1) for e in range(s, len(path)) if path[e] == "/")
        if pattern.startswith("**", p):
            return any(match(p + 2, e) for e in range(s, len(path) + 1))
        if pattern[p] == "*":
            e = s
            while True:
                if match(p + 1, e):
                    return True
                if e == len(path) or path[e] == "/":
                    return False
                e += 1
        if s == len(path):
            return False
        if pattern[p] == "?":
            return path[s] != "/" and match(p + 1, s + 1)
        return pattern[p] == path[s] and match(p + 1, s + 1)

    return match(0, 0)


globs = st.lists(st.sampled_from(["a", "b", "/", "*", "?", "**", "**/"]), min_size=1, max_size=8).map("".join).filter(
    lambda g: any(c in g for c in "*?") and not g.startswith(("/", "./"))
)
paths = st.lists(st.sampled_from(["a", "b", "/"]), max_size=10).map("".join)


@settings(max_examples=3000, deadline=None)
@given(pattern=globs, path=paths)
def test_globs_keep_their_meaning(pattern: str, path: str) -> None:
    assert bool(re.match(glob_to_regex(pattern), path)) == reference_match(pattern, path), glob_to_regex(pattern)


def test_a_backtracking_bomb_of_a_filter_matches_in_bounded_time() -> None:
    path = "d3/notes-about-the-quarterly-planning-of-the-eleventh-year-2024.md"
    for pattern in ("**/" + "*?" * 12 + "x", "*a" * 14 + "*b", "**e" * 10 + "**x", "**/" + "*e" * 12 + "x"):
        regex = re.compile(glob_to_regex(pattern))
        started = time.perf_counter()
        regex.match(path)
        regex.match("a" * 200 + ".md")
        assert time.perf_counter() - started < 0.5, pattern
