"""The one glob dialect of kbls: `.gitignore`'s, compiled by pathspec.

`path:` filters of a search and `include`/`exclude` of `.kbls.yaml` mean the same thing:
`*` and `?` stay inside one folder, `**` crosses folders, `[ab]` is a character class, a
pattern without a slash (other than a trailing one) matches at any depth, a pattern that names a
folder matches everything under it, a trailing `/` matches folders only, a leading `/` anchors
at the root (see docs/configuration.md, "Glob patterns").

Bounded time: a filter arrives from any client, and a pattern such as `*a*a*a*a*a*a*b` makes a
backtracking regex engine try every split of a long name. A pattern whose regex holds more than
two unbounded repetitions (`*a*b*c`, `a/**/b/*c*`) is therefore matched by RE2 (linear time)
instead of Python's `re`, which stays the engine of ordinary patterns (`notes/**`, `*.md`,
`*2024*`): it is 10-20x cheaper per call, and SQLite calls it once per candidate row.
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
_ANY_DEPTH = "^(?:.+/)?"


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
    return _matcher(pattern)(path) is not None


def _no_match(_path: str) -> None:
    return None


@lru_cache(maxsize=256)
def _matcher(pattern: str) -> Callable[[str], object | None]:
    """The `search` method of the pattern's compiled regex (called per row: no wrapper)."""
    try:
        compiled = GitIgnoreSpecPattern(filter_pattern(pattern))
    except (GitIgnorePatternError, re.error) as exc:  # re.error: a range pathspec passes on (`[z-a]`)
        raise QueryError(f"path filter {pattern!r} is not a valid glob: {exc}") from None
    if compiled.include is None or compiled.regex is None:
        if pattern.strip():  # pathspec drops a line it cannot parse (`a[`)
            raise QueryError(f"path filter {pattern!r} is not a valid glob")
        return _no_match
    # As pathspec does: `search`, since some patterns (`**/`) compile to an unanchored regex.
    source = compiled.regex.pattern
    # The "at any depth" prefix of a pattern without a slash can only end at one of the few
    # slashes of a path: it does not count (so `*2024*` stays on `re`).
    unescaped = _ESCAPED.sub("", source.removeprefix(_ANY_DEPTH))
    if unescaped.count("*") + unescaped.count("+") <= MAX_BACKTRACKING_REPEATS:
        return compiled.regex.search
    search: Callable[[str], object | None] = re2.compile(source).search
    return search
