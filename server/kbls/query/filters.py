"""The filters of a search: path globs, tags and note types, all of which a hit must satisfy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Filters:
    """Each field ORs its values; the fields AND together. Empty fields filter nothing."""

    #: globs over root-relative posix paths (see `kbls.query.globs`).
    paths: tuple[str, ...] = ()
    #: tags without `#`, compared lowercased.
    tags: tuple[str, ...] = ()
    #: front-matter `type:` values or file kinds (`md`, `rst`, `txt`), compared lowercased.
    types: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.paths or self.tags or self.types)
