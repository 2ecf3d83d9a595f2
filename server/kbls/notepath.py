"""Names derived from a note's root-relative path, computed one way everywhere."""

from __future__ import annotations


def file_stem(path: str) -> str:
    """Lowercased file name without extension (`notes/Rust.md` -> `rust`): what a `[[wiki link]]`
    names, compared case-insensitively."""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
