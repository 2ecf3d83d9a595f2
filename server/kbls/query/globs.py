"""The one glob dialect of kbls: `.gitignore`'s, compiled by pathspec.

`path:` filters of a search and `include`/`exclude` of `.kbls.yaml` mean the same thing:
`*` and `?` stay inside one folder, `**` crosses folders, `[ab]` is a character class, a
pattern without a slash (other than a trailing one) matches at any depth, a pattern that names a
folder matches everything under it, a trailing `/` matches folders only, a leading `/` anchors
at the root (see docs/configuration.md, "Glob patterns").

Bounded time: a filter arrives from any client, and a pattern such as `*a*a*a*a*a*a*b` makes a
backtracking regex engine try every split of a long name. A pattern whose regex holds more than
two unbounded repetitions is therefore matched by RE2 (linear time) instead of Python's `re`,
which stays the engine of ordinary patterns because it is ~20x faster per call from SQLite.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

import pathspec
import re2
from pathspec.patterns.gitignore import GitIgnorePatternError
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from kbls.errors import QueryError

#: more unbounded repetitions than this in one regex and Python's `re` may backtrack for long.
MAX_BACKTRACKING_REPEATS = 2
_ESCAPED = re.compile(r"\\.")


def glob_spec(patterns: Iterable[str]) -> pathspec.GitIgnoreSpec:
    """A list of patterns (`.kbls.yaml` include/exclude, a `.gitignore` file) as one spec."""
    return pathspec.GitIgnoreSpec.from_lines(list(patterns))


def filter_pattern(pattern: str) -> str:
    """A `path:` filter as a gitignore line: surrounding blanks and a leading `./` dropped, and
    a leading `!` or `#` taken literally (a filter selects; it has no negation or comments)."""
    text = pattern.strip()
    if text.startswith("./"):
        text = text[2:]
    if text.startswith(("!", "#")):
        text = "\\" + text
    return text


def check_glob(pattern: str) -> None:
    """Raise `QueryError` when `pattern` is not a valid `path:` filter."""
    _matcher(pattern)


def glob_matches(pattern: str, path: str) -> bool:
    """Whether the root-relative posix `path` of a file matches the `path:` filter `pattern`."""
    return _matcher(pattern)(path)


@lru_cache(maxsize=256)
def _matcher(pattern: str) -> Callable[[str], bool]:
    try:
        compiled = GitIgnoreSpecPattern(filter_pattern(pattern))
    except GitIgnorePatternError as exc:
        raise QueryError(f"path filter {pattern!r} is not a valid glob: {exc}") from None
    if compiled.include is None or compiled.regex is None:
        if pattern.strip():  # pathspec drops a line it cannot parse (`a[`)
            raise QueryError(f"path filter {pattern!r} is not a valid glob")
        return lambda _path: False
    # As pathspec does: `search`, since some patterns (`**/`) compile to an unanchored regex.
    source = compiled.regex.pattern
    unescaped = _ESCAPED.sub("", source)
    if unescaped.count("*") + unescaped.count("+") <= MAX_BACKTRACKING_REPEATS:
        fast = compiled.regex
        return lambda path: fast.search(path) is not None
    linear = re2.compile(source)
    return lambda path: linear.search(path) is not None
