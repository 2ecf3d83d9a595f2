"""Every install hint names a command that works.

kbls is not on the package index yet, so `uv tool install kbls` / `pipx install kbls` (and their
`upgrade`) fail: the docs, the editors' messages and the server's say how to install a clone
(`uv tool install ./`) or the wheel a VSIX carries. None says a bare `pip install kbls`: PEP 668
systems refuse it, and it would not put `kbls` on the PATH the editors search.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BARE_PIP = re.compile(r"(?<![\w-])pip3? install (?:-U |--upgrade |--user )*kbls(?![\w-])")
#: a package-index name where only a path works today; `kbls.whl`, `kbls-0.1.0...` are paths.
BY_NAME = re.compile(r"\b(?:uv tool (?:install|upgrade)|pipx (?:install|upgrade))(?: --?[\w-]+)* kbls(?![\w./-])")
#: a warning against it ("Never `pip install kbls` into a system Python") is not advice to do it.
WARNING = re.compile(r"\b(?:never|not|don't)\b", re.IGNORECASE)


def _advises_bare_pip(line: str) -> bool:
    return any(not WARNING.search(line[: match.start()]) for match in BARE_PIP.finditer(line))


def _user_facing_files() -> list[Path]:
    """What a user reads: docs, the server's messages, both editors' messages, docs and walkthrough."""
    ext, nvim = REPO / "vscode-extension", REPO / "neovim"
    files = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    files += sorted((REPO / "server" / "kbls").rglob("*.py"))
    files += [ext / "README.md", ext / "package.json", *sorted((ext / "media").rglob("*.md"))]
    files += sorted((ext / "src").glob("*.ts"))
    files += [nvim / "README.md", *sorted((nvim / "doc").glob("*.txt")), *sorted((nvim / "lua").rglob("*.lua"))]
    return files


def _offenders(advises: object) -> list[str]:
    assert callable(advises)
    return [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in _user_facing_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if advises(line)
    ]


def test_no_bare_pip_install_in_docs_or_messages() -> None:
    offenders = _offenders(_advises_bare_pip)
    assert not offenders, "say `uv tool install ./` / `pipx install ./` instead:\n" + "\n".join(offenders)


def test_no_hint_installs_kbls_by_a_name_the_package_index_does_not_have() -> None:
    offenders = _offenders(BY_NAME.search)
    assert not offenders, (
        "kbls is not on the package index: name a clone (`uv tool install ./`) or the VSIX's wheel:\n"
        + "\n".join(offenders)
    )


def test_the_readme_says_how_to_install_a_clone_and_the_vsix_wheel() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for command in ("git clone https://github.com/kbls/kbls && cd kbls", "uv tool install ./", "pipx install ./",
                    "uv tool install PATH/TO/kbls-VERSION-py3-none-any.whl"):
        assert command in readme


def test_the_patterns_catch_advice_only() -> None:
    assert _advises_bare_pip("run `pip install kbls` first")
    assert _advises_bare_pip("pip3 install --user kbls")
    assert not _advises_bare_pip("pipx install kbls")
    assert not _advises_bare_pip("pip install kbls-extra")
    assert not _advises_bare_pip("uv tool install kbls")
    assert not _advises_bare_pip("Never `pip install kbls` into a system Python")
    for named in ("uv tool install kbls", "pipx install kbls", "`uv tool upgrade kbls`", "pipx upgrade kbls)",
                  "uv tool install --reinstall kbls"):
        assert BY_NAME.search(named), named
    for path in ("uv tool install ./", "pipx install ./", "uv tool install kbls-0.1.0-py3-none-any.whl",
                 "uv tool install ~/x/kbls.kbls-0.1.0/server/kbls-0.1.0-py3-none-any.whl", "uv tool install kbls/"):
        assert not BY_NAME.search(path), path
