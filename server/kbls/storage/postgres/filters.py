"""Search filters (`kbls.query.filters.Filters`) as a Postgres WHERE clause over `f` (files).

A `path:` glob becomes the regular expression `kbls.query.globs` compiles it to (pathspec's
gitignore dialect), matched by the server's `~`: the same paths as the SQLite backend's
`kb_glob`, decided inside the query instead of after it.
"""

from __future__ import annotations

import re

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from kbls.errors import QueryError
from kbls.query.filters import Filters
from kbls.query.globs import check_glob, filter_pattern

Params = dict[str, object]
_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


def glob_regex(pattern: str) -> str:
    """The POSIX (Postgres ARE) regex of a `path:` filter; one that matches nothing for an empty one."""
    check_glob(pattern)
    compiled = GitIgnoreSpecPattern(filter_pattern(pattern))
    if compiled.regex is None:
        return "$^"
    source = compiled.regex.pattern
    if "(?P=" in source or "(?<" in source:
        raise QueryError(f"path filter {pattern!r} cannot be matched by the team store")
    return _NAMED_GROUP.sub("(", source)


def filter_sql(filters: Filters, params: Params) -> str:
    """WHERE clauses over `f` for the filters, binding values into `params`; "TRUE" if none."""
    clauses = []
    if filters.paths:
        ors = []
        for i, pattern in enumerate(filters.paths):
            params[f"path{i}"] = glob_regex(pattern)
            ors.append(f"f.path ~ %(path{i})s")
        clauses.append("(" + " OR ".join(ors) + ")")
    for i, tag in enumerate(filters.tags):
        params[f"tag{i}"] = tag.lower().lstrip("#")
        clauses.append(f"f.id IN (SELECT file_id FROM tags WHERE tag = %(tag{i})s)")
    if filters.types:
        params["types"] = [kind.lower().lstrip(".") for kind in filters.types]
        clauses.append("(lower(f.note_type) = ANY(%(types)s) OR f.kind = ANY(%(types)s))")
    return " AND ".join(clauses) if clauses else "TRUE"
