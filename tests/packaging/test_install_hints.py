"""Documents and server messages tell users to install kbls as a tool (`uv tool install kbls`,
`pipx install kbls`), never with a bare `pip install kbls`: no such command works on PEP 668
systems, and it would not put `kbls` on the PATH the editors search."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BARE_PIP = re.compile(r"(?<![\w-])pip3? install (?:-U |--upgrade |--user )*kbls(?![\w-])")
#: a warning against it ("Never `pip install kbls` into a system Python") is not advice to do it.
WARNING = re.compile(r"\b(?:never|not|don't)\b", re.IGNORECASE)


def _advises_bare_pip(line: str) -> bool:
    return any(not WARNING.search(line[: match.start()]) for match in BARE_PIP.finditer(line))


def _user_facing_files() -> list[Path]:
    files = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    files += sorted((REPO / "server" / "kbls").rglob("*.py"))
    return files


def test_no_bare_pip_install_in_docs_or_server_messages() -> None:
    offenders = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in _user_facing_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _advises_bare_pip(line)
    ]
    assert not offenders, "say `uv tool install kbls` / `pipx install kbls` instead:\n" + "\n".join(offenders)


def test_the_readme_says_how_to_install_as_a_tool_and_from_a_clone() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for command in ("uv tool install kbls", "pipx install kbls", "uv tool install ./", "pipx install ./"):
        assert command in readme


def test_the_pattern_catches_a_bare_pip_install_only() -> None:
    assert _advises_bare_pip("run `pip install kbls` first")
    assert _advises_bare_pip("pip3 install --user kbls")
    assert not _advises_bare_pip("pipx install kbls")
    assert not _advises_bare_pip("pip install kbls-extra")
    assert not _advises_bare_pip("uv tool install kbls")
    assert not _advises_bare_pip("Never `pip install kbls` into a system Python")
