"""A benchmark's figures kept between runs: one JSON file, one entry per phase."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def load(path: Path) -> dict[str, Any]:
    """Every phase's entry; empty when the file is missing or unreadable."""
    try:
        results: dict[str, Any] = json.loads(path.read_text())
        return results
    except (OSError, ValueError):
        return {}


def save(path: Path, phase: str, entry: dict[str, Any]) -> None:
    """Replace `phase`'s entry, keeping the others (written whole, then renamed into place)."""
    results = load(path)
    results[phase] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=2))
    tmp.replace(path)
