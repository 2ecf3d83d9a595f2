"""The store's reads of where links and tags are written (`link_spans`, `tag_spans`):
references, backlinks, rename and broken-link checks read these, never the files.

`StoreSpans` is a third part of `kbls.storage.store.Store`, beside `StoreReads` and `StoreWrites`
(which writes the spans with a note's chunks, `_write_spans`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kbls.storage.connection import ConnectionPool
from kbls.storage.records import SourcedLink, SourcedTag, link_from_row, link_order, tag_from_row

#: SQLite binds at most 999 variables in old builds: IN lists go in batches.
BATCH = 500

_LINK_COLUMNS = (
    "f.id, f.path, f.title, s.kind, s.target, s.target_key, s.heading, s.label, s.line, s.start, s.end, "
    "s.start16, s.end16, s.start8, s.end8"
)
_TAG_COLUMNS = (
    "f.id, f.path, f.title, s.tag, s.written, s.front_matter, s.line, s.start, s.end, s.start16, s.end16, s.start8, "
    "s.end8"
)


class StoreSpans:
    """Read queries over `self.db`'s span tables."""

    db: ConnectionPool

    def links_to(self, keys: Iterable[str]) -> list[SourcedLink]:
        """The links whose look-up key (`LinkSpan.key`) is one of `keys`, by source path and position."""
        wanted = sorted(set(keys))
        rows: list[Any] = []
        for i in range(0, len(wanted), BATCH):
            batch = wanted[i : i + BATCH]
            marks = ",".join("?" * len(batch))
            rows += self.db.conn.execute(
                f"SELECT {_LINK_COLUMNS} FROM link_spans s JOIN files f ON f.id = s.file_id "
                f"WHERE s.target_key IN ({marks})",
                batch,
            ).fetchall()
        return sorted((link_from_row(row) for row in rows), key=link_order)

    def links_under(self, folders: Iterable[str]) -> list[SourcedLink]:
        """The markdown links whose root-relative path is inside one of `folders`."""
        rows: list[Any] = []
        for folder in dict.fromkeys(f.rstrip("/") for f in folders if f.strip("/")):
            rows += self.db.conn.execute(  # a range on the index instead of LIKE, which reads `_` as a wildcard
                f"SELECT {_LINK_COLUMNS} FROM link_spans s JOIN files f ON f.id = s.file_id "
                "WHERE s.target_key >= ? AND s.target_key < ? AND s.kind = 'path'",
                (f"{folder}/", f"{folder}0"),  # "0" is the character after "/"
            ).fetchall()
        return sorted((link_from_row(row) for row in rows), key=link_order)

    def every_link(self) -> list[SourcedLink]:
        """Every stored link of the root, by source path and position (workspace diagnostics)."""
        rows = self.db.conn.execute(f"SELECT {_LINK_COLUMNS} FROM link_spans s JOIN files f ON f.id = s.file_id").fetchall()
        return sorted((link_from_row(row) for row in rows), key=link_order)

    def links_of(self, path: str) -> list[SourcedLink]:
        """Every link the note at `path` writes, in order."""
        rows = self.db.conn.execute(
            f"SELECT {_LINK_COLUMNS} FROM link_spans s JOIN files f ON f.id = s.file_id WHERE f.path = ? "
            "ORDER BY s.line, s.start",
            (path,),
        ).fetchall()
        return [link_from_row(row) for row in rows]

    def tag_uses(self, tag: str, nested: bool = True) -> list[SourcedTag]:
        """Where `tag` (lowercase, no `#`) is written, and with `nested` its children
        (`tag/child`), by source path and position."""
        sql = f"SELECT {_TAG_COLUMNS} FROM tag_spans s JOIN files f ON f.id = s.file_id WHERE s.tag = ?"
        params = [tag]
        if nested:
            # a range on the index instead of LIKE, which reads `_` as a wildcard
            sql += " OR (s.tag >= ? AND s.tag < ?)"
            params += [f"{tag}/", f"{tag}0"]  # "0" is the character after "/"
        rows = self.db.conn.execute(sql, params).fetchall()
        return sorted((tag_from_row(row) for row in rows), key=lambda t: (t.path, t.tag.span.line, t.tag.span.start))

    def tags_of(self, path: str) -> list[SourcedTag]:
        """Every tag the note at `path` writes, in order."""
        rows = self.db.conn.execute(
            f"SELECT {_TAG_COLUMNS} FROM tag_spans s JOIN files f ON f.id = s.file_id WHERE f.path = ? "
            "ORDER BY s.line, s.start",
            (path,),
        ).fetchall()
        return [tag_from_row(row) for row in rows]

    def chunks_at(self, places: Iterable[tuple[str, int]]) -> dict[tuple[str, int], tuple[str, str, int]]:
        """(path, 0-based line) -> (breadcrumb, body, first line) of the chunk holding that line."""
        out: dict[tuple[str, int], tuple[str, str, int]] = {}
        for path, line in dict.fromkeys(places):
            row = self.db.conn.execute(
                "SELECT c.breadcrumb, c.body, c.start_line FROM chunks c JOIN files f ON f.id = c.file_id "
                "WHERE f.path = ? AND c.start_line <= ? AND c.end_line >= ? ORDER BY c.ord LIMIT 1",
                (path, line, line),
            ).fetchone()
            if row is not None:
                out[(path, line)] = (str(row[0]), str(row[1]), int(row[2]))
        return out
