"""The team store's reads of where links and tags are written (the Postgres form of
`kbls.storage.spans.StoreSpans`, scoped to the store's root)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kbls.storage.postgres.connection import PgPool
from kbls.storage.postgres.paths import checked, checked_links
from kbls.storage.records import SourcedLink, SourcedTag, link_from_row, link_order, tag_from_row

_LINKS = (
    "SELECT f.id, f.path, f.title, s.kind, s.target, s.target_key, s.heading, s.label, s.line, s.start_cp, s.end_cp, "
    "s.start16, s.end16, s.start8, s.end8 FROM link_spans s JOIN files f ON f.id = s.file_id WHERE f.root_id = %s"
)
_TAGS = (
    "SELECT f.id, f.path, f.title, s.tag, s.written, s.front_matter, s.line, s.start_cp, s.end_cp, s.start16, s.end16, "
    "s.start8, s.end8 FROM tag_spans s JOIN files f ON f.id = s.file_id WHERE f.root_id = %s"
)


class PgSpans:
    db: PgPool
    root_id: int

    def _kept(self, rows: list[Any]) -> list[Any]:
        """The span rows whose note's path is inside the root (`paths.checked`)."""
        return checked(rows, self.db.display)

    def _kept_links(self, rows: list[Any]) -> list[Any]:
        """The link rows of notes inside the root whose key is the one kbls makes of their target."""
        return checked_links(self._kept(rows), self.db.display)

    def links_to(self, keys: Iterable[str]) -> list[SourcedLink]:
        rows = self.db.fetch(f"{_LINKS} AND s.target_key = ANY(%s)", (self.root_id, sorted(set(keys))))
        return sorted((link_from_row(r) for r in self._kept_links(rows)), key=link_order)

    def links_under(self, folders: Iterable[str]) -> list[SourcedLink]:
        rows: list[Any] = []
        for folder in dict.fromkeys(f.rstrip("/") for f in folders if f.strip("/")):
            rows += self.db.fetch(
                f"{_LINKS} AND s.target_key >= %s AND s.target_key < %s AND s.kind = 'path'",
                (self.root_id, f"{folder}/", f"{folder}0"),
            )
        return sorted((link_from_row(r) for r in self._kept_links(rows)), key=link_order)

    def every_link(self) -> list[SourcedLink]:
        return sorted((link_from_row(r) for r in self._kept_links(self.db.fetch(_LINKS, (self.root_id,)))), key=link_order)

    def links_of(self, path: str) -> list[SourcedLink]:
        rows = self.db.fetch(f"{_LINKS} AND f.path = %s ORDER BY s.line, s.start_cp", (self.root_id, path))
        return [link_from_row(r) for r in self._kept_links(rows)]

    def tag_uses(self, tag: str, nested: bool = True) -> list[SourcedTag]:
        if nested:
            rows = self.db.fetch(
                f"{_TAGS} AND (s.tag = %s OR (s.tag >= %s AND s.tag < %s))", (self.root_id, tag, f"{tag}/", f"{tag}0")
            )
        else:
            rows = self.db.fetch(f"{_TAGS} AND s.tag = %s", (self.root_id, tag))
        return sorted((tag_from_row(r) for r in self._kept(rows)), key=lambda t: (t.path, t.tag.span.line, t.tag.span.start))

    def tags_of(self, path: str) -> list[SourcedTag]:
        rows = self.db.fetch(f"{_TAGS} AND f.path = %s ORDER BY s.line, s.start_cp", (self.root_id, path))
        return [tag_from_row(r) for r in self._kept(rows)]

    def chunks_at(self, places: Iterable[tuple[str, int]]) -> dict[tuple[str, int], tuple[str, str, int]]:
        out: dict[tuple[str, int], tuple[str, str, int]] = {}
        for path, line in dict.fromkeys(places):
            row = self.db.one(
                "SELECT c.breadcrumb, c.body, c.start_line FROM chunks c JOIN files f ON f.id = c.file_id "
                "WHERE f.root_id = %s AND f.path = %s AND c.start_line <= %s AND c.end_line >= %s ORDER BY c.ord LIMIT 1",
                (self.root_id, path, line, line),
            )
            if row is not None:
                out[(path, line)] = (str(row[0]), str(row[1]), int(row[2]))
        return out
