"""Search filters (`kbls.query.filters.Filters`) as an SQL WHERE clause over `f` (files)."""

from __future__ import annotations

from kbls.query.filters import Filters

#: values bound into the clause, by parameter name.
Params = dict[str, object]


def filter_sql(filters: Filters, params: Params) -> str:
    """WHERE clauses over `f` (files) for the filters, binding values into `params`; "1" if none."""
    clauses = []
    if filters.paths:
        ors = []
        for i, pattern in enumerate(filters.paths):
            params[f"path{i}"] = pattern
            ors.append(f"kb_glob(:path{i}, f.path)")
        clauses.append("(" + " OR ".join(ors) + ")")
    for i, tag in enumerate(filters.tags):
        params[f"tag{i}"] = tag.lower().lstrip("#")
        clauses.append(f"f.id IN (SELECT file_id FROM tags WHERE tag = :tag{i})")
    if filters.types:
        names = []
        for i, kind in enumerate(filters.types):
            params[f"type{i}"] = kind.lower().lstrip(".")
            names.append(f":type{i}")
        joined = ", ".join(names)
        clauses.append(f"(lower(f.note_type) IN ({joined}) OR f.kind IN ({joined}))")
    return " AND ".join(clauses) if clauses else "1"
