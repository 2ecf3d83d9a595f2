"""The version is written once (`kbls.__version__`); every other place that must name it agrees."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import kbls
from kbls.cli import build_parser

REPO = Path(__file__).resolve().parents[2]


def test_version_is_a_release_number() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?", kbls.__version__)


def test_pyproject_reads_the_version_from_the_package() -> None:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in text
    assert 'version = {attr = "kbls.__version__"}' in text
    assert not re.search(r'(?m)^version\s*=\s*"', text), "a literal version in pyproject.toml would be a second one"


def test_the_vscode_extension_has_the_server_version() -> None:
    package = json.loads((REPO / "vscode-extension" / "package.json").read_text(encoding="utf-8"))
    assert package["version"] == kbls.__version__


def test_the_newest_released_changelog_entry_is_this_version() -> None:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"(?m)^## \[(\d[^\]]*)\] - \d{4}-\d{2}-\d{2}$", text)
    assert released, "CHANGELOG.md has no released version"
    assert released[0] == kbls.__version__
    assert "## [Unreleased]" in text


def test_kbls_version_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"kbls {kbls.__version__}"
