"""Names derived from a note's root-relative path, computed one way everywhere."""

from __future__ import annotations

import posixpath


def note_stem(path: str) -> str:
    """The file name without its extension, case kept (`notes/Rust.md` -> `Rust`): the title of a
    note that has no other."""
    return posixpath.splitext(posixpath.basename(path))[0]


def file_stem(path: str) -> str:
    """The lowercased stem (`notes/Rust.md` -> `rust`): what a `[[wiki link]]` names, compared
    case-insensitively."""
    return note_stem(path).lower()
