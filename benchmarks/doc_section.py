"""Rewrite one benchmark's section of docs/benchmarks.md, between its markers, keeping the rest."""

from __future__ import annotations

import re
from pathlib import Path


def replace_section(doc: Path, start: str, end: str, section: str) -> None:
    """Put `section` (which begins with `start` and ends with `end`) in place of the old one,
    or append it when the document has none yet."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    # A function as the replacement, so backslashes in the section are not read as group references.
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section + "\n"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text, encoding="utf-8")
