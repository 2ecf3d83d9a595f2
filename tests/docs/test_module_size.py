"""No module of the server grows past what one reader holds in mind: 400 lines, docstrings included."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "kbls"
MAX_LINES = 400


def test_no_module_is_over_400_lines() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50, f"expected the kbls package under {PACKAGE}"
    too_long = {
        str(m.relative_to(PACKAGE)): n
        for m in modules
        if (n := len(m.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not too_long, f"split these by job (lines): {too_long}"
