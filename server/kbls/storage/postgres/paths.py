"""The check every path read from a team store passes before kbls uses it.

A team store is a database someone else may write: a row whose path is absolute, climbs out with
`..`, or holds a backslash or NUL would become a URI or a file read outside the workspace root.
Such rows are dropped (a search never fails for them) and the store is named once in the log.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Sequence
from typing import TypeVar

log = logging.getLogger(__name__)

_DRIVE = re.compile(r"[A-Za-z]:")
_warned: set[str] = set()
_warned_lock = threading.Lock()

Row = TypeVar("Row", bound=Sequence[object])


def clean_path(path: object) -> bool:
    """Whether `path` is a root-relative POSIX path as the indexer writes one: not empty, not
    absolute (nor a drive), no backslash or NUL, no empty, `.` or `..` part."""
    if not isinstance(path, str) or not path or "\\" in path or "\x00" in path:
        return False
    parts = path.split("/")
    return not _DRIVE.fullmatch(parts[0]) and all(part not in ("", ".", "..") for part in parts)


def clean_path_sql(column: str) -> str:
    """`clean_path` of `column` as a SQL condition, for counts made in the query (a total must not
    count the rows `checked` leaves out); PostgreSQL text holds no NUL."""
    return (
        f"(strpos({column}, E'\\\\') = 0 AND ('/' || {column} || '/') !~ '/[.]{{0,2}}/' "
        f"AND {column} !~ '^[A-Za-z]:(/|$)')"
    )


def clean_link(path: str, kind: object, target: object, key: object) -> bool:
    """Whether a stored link's look-up key is the one kbls makes of its target written in the note
    at `path` (`indexing.spans.link_key`): a key written by hand (`../../x`, `/etc`) is left out."""
    from kbls.indexing.spans import link_key
    from kbls.links.syntax import LinkKind

    try:
        return isinstance(target, str) and key == link_key(path, LinkKind(kind), target)
    except ValueError:  # a kind kbls does not write
        return False


def checked_links(rows: Iterable[Row], store: str) -> list[Row]:
    """Link rows (path, kind, target, key at 1, 3, 4, 5) without those `clean_link` refuses, said
    once per store: a worker whose kbls makes other keys would otherwise lose backlinks silently."""
    kept: list[Row] = []
    dropped: list[Row] = []
    for row in rows:
        (kept if clean_link(str(row[1]), row[3], row[4], row[5]) else dropped).append(row)
    if dropped:
        _warn_once(
            f"{store} links", "the team store %s holds links whose look-up key kbls would not make of their "
            "target (e.g. %r in %s): those links are left out; an ingest worker of another kbls version writes them?",
            store, dropped[0][5], dropped[0][1],
        )
    return kept


def checked(rows: Iterable[Row], store: str, *columns: int) -> list[Row]:
    """`rows` without those whose path `columns` (default: the second) are not `clean_path`."""
    wanted = columns or (1,)
    kept: list[Row] = []
    dropped: list[object] = []
    for row in rows:
        if all(clean_path(row[c]) for c in wanted):
            kept.append(row)
        else:
            dropped.append(next(row[c] for c in wanted if not clean_path(row[c])))
    if dropped:
        _warn(store, dropped)
    return kept


def _warn(store: str, dropped: list[object]) -> None:
    _warn_once(store, "the team store %s holds paths that are not inside its root (e.g. %r): those rows are left out",
               store, dropped[0])


def _warn_once(key: str, message: str, *args: object) -> None:
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    log.warning(message, *args)
