"""`read_note` reads the file it checked: a folder swapped for a symlink between the check and
the open is refused, never followed out of the root.

The swap is made inside `os.open` itself, just before the real open, so the race is the same
every run: the note's folder becomes a symlink to a folder outside the root holding a file of
the same name. Opening the checked name again would read that outside file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tests.support.corpus import write, write_config

from kbls.engine import Engine
from kbls.errors import OutsideRootError
from kbls.indexing.embed import Embedder
from kbls.mcp.local import LocalBackend


def test_a_folder_swapped_for_a_symlink_before_the_open_is_not_followed(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "notes"
    write(root, "journal/today.md", "# Today\n\nA note inside the root.\n")
    write_config(root)
    write(tmp_path / "secret", "today.md", "# Secret\n\nOutside every root.\n")
    engine = Engine(root, embedder=embedder)
    engine.index()
    engine.close()
    backend = LocalBackend()
    try:
        assert "inside the root" in backend.read_note([root], "journal/today.md", start_line=None, end_line=None).text
        real_open = os.open

        def swapping(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if str(path).endswith("today.md") and not (root / "journal").is_symlink():
                (root / "journal").rename(tmp_path / "journal-moved")
                (root / "journal").symlink_to(tmp_path / "secret", target_is_directory=True)
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", swapping)
        with pytest.raises(OutsideRootError, match="changed while it was opened"):
            backend.read_note([root], "journal/today.md", start_line=None, end_line=None)
    finally:
        backend.close()
