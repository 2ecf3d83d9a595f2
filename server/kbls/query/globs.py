"""Globs of `path:` filters: `**` (any folders), `*`, `?`, as in .gitignore.

A plain folder name matches what is under it; a pattern without `/` matches file names at any
depth. Compiled patterns are cached: a search runs the same few patterns over many paths.
"""

from __future__ import annotations

import re
from functools import lru_cache


def glob_to_regex(pattern: str) -> str:
    """Glob with `**` (any folders), `*`, `?`; a plain folder name matches what is under it, and
    a pattern without `/` matches file names at any depth."""
    pattern = pattern.strip().lstrip("./") if pattern.startswith("./") else pattern.strip().lstrip("/")
    if not any(c in pattern for c in "*?["):
        folder = re.escape(pattern.rstrip("/"))
        return rf"^{folder}(/.*)?$"
    tokens: list[tuple[str, str]] = []  # (kind, regex); kind: lit, star, deep or deepdir
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            tokens.append(("deepdir", "(?:.*/)?"))
            i += 3
            continue
        if pattern.startswith("**", i):
            tokens.append(("deep", ".*"))
            i += 2
            continue
        if ch == "*":
            tokens.append(("star", "[^/]*"))
        elif ch == "?":
            tokens.append(("lit", "[^/]"))
        else:
            tokens.append(("lit", re.escape(ch)))
        i += 1
    out = []
    j = 0
    while j < len(tokens):
        kind, rx = tokens[j]
        k = j + 1
        while k < len(tokens) and tokens[k][0] == "lit":
            k += 1
        if kind in ("star", "deep") and k > j + 1 and k < len(tokens) and tokens[k][0] == kind:
            # "*SEG*" ("**SEG**"): take SEG at its first place, atomically (lookahead plus
            # backreference, as fnmatch does), so a filter like `*?*?*?*?x` cannot make the
            # regex try every split of a path (catastrophic backtracking hung the search
            # thread). The first place is right because the next wildcard skips as far.
            seg = "".join(rx for _, rx in tokens[j + 1 : k])
            body = "[^/]" if kind == "star" else "."
            out.append(f"(?=(?P<g{j}>{body}*?{seg}))(?P=g{j})")
            j = k
            continue
        out.append(rx)
        j += 1
    # As in .gitignore: a pattern without a slash (`*.md`) matches a file name at any depth.
    anywhere = "(?:.*/)?" if "/" not in pattern else ""
    return "^" + anywhere + "".join(out) + "$"


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(glob_to_regex(pattern))


def glob_matches(pattern: str, path: str) -> bool:
    """Whether the root-relative posix `path` matches the glob `pattern`."""
    return _compiled(pattern).match(path) is not None
