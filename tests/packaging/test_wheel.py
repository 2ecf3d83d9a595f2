"""kbls as users install it: the built wheel, installed with `uv tool install` into an isolated
environment (not the dev venv), gives a working `kbls` on PATH with the offline model.

Also: every distribution that server/kbls imports is declared in pyproject.toml, and the wheel
and sdist pass `twine check --strict`. The build and install take ~30 s with a warm uv cache
(dependencies come from the package index on the first run).
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

import kbls

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "server" / "kbls"
FIXTURES = REPO / "tests" / "fixtures" / "notes"
pytestmark = pytest.mark.packaging


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


#: extras a user installs for a feature (`kbls[postgres]`); `test` is the developers' own.
FEATURE_EXTRAS = ("postgres",)


def _declared_dependencies() -> set[str]:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project.get("optional-dependencies", {})
    specs = [*project["dependencies"], *(spec for extra in FEATURE_EXTRAS for spec in extras[extra])]
    return {_normalise(re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0]) for spec in specs if not spec.startswith("kbls")}


def _imported_top_level_modules() -> set[str]:
    names: set[str] = set()
    for source in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n != "kbls" and n not in sys.stdlib_module_names and n != "__future__"}


def test_every_imported_distribution_is_declared() -> None:
    declared = _declared_dependencies()
    providers = importlib.metadata.packages_distributions()
    undeclared = {}
    for module in sorted(_imported_top_level_modules()):
        distributions = {_normalise(d) for d in providers.get(module, [])}
        assert distributions, f"{module} is imported by server/kbls but no installed distribution provides it"
        if not distributions & declared:
            undeclared[module] = sorted(distributions)
    assert not undeclared, f"imported by server/kbls but not in [project] dependencies or a feature extra: {undeclared}"


def test_a_feature_extra_is_imported_only_when_its_feature_is_used() -> None:
    # kbls without `kbls[postgres]` installed must start: the team store's client loads on use
    code = (
        "import sys, kbls.cli, kbls.engine, kbls.config, kbls.lsp.server, kbls.mcp.local, kbls.userdaemon.main; "
        "loaded = sorted(m for m in ('psycopg', 'pgvector') if m in sys.modules); "
        "assert not loaded, loaded"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def _build(tmp_path: Path) -> tuple[Path, Path]:
    """`python -m build` of a clean copy of the sources (sdist, then the wheel from the sdist)."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(
        REPO / "server", source / "server", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    )
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(source)],
        check=True, capture_output=True, text=True, timeout=600,
    )
    (wheel,) = dist.glob("kbls-*.whl")
    (sdist,) = dist.glob("kbls-*.tar.gz")
    return wheel, sdist


def _run(command: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{command} exited {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    return result


def test_wheel_installs_as_a_tool_and_searches_offline(tmp_path: Path) -> None:
    wheel, sdist = _build(tmp_path)
    assert wheel.name == f"kbls-{kbls.__version__}-py3-none-any.whl"
    assert sdist.name == f"kbls-{kbls.__version__}.tar.gz"
    twine = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
        capture_output=True, text=True, timeout=120,
    )
    assert twine.returncode == 0, twine.stdout + twine.stderr
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"kbls-{kbls.__version__}.dist-info/METADATA").decode()
    for model_file in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "NOTICE"):
        assert f"kbls/model/{model_file}" in names
    assert f"kbls-{kbls.__version__}.dist-info/licenses/LICENSE" in names
    assert "License-Expression: Apache-2.0" in metadata
    assert "Requires-Dist: mcp" in metadata

    # An isolated tool environment and a PATH without the dev venv: what a user gets.
    tools, bin_dir = tmp_path / "uv-tools", tmp_path / "bin"
    env = {
        key: value for key, value in os.environ.items()
        if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    }
    env.update(
        UV_TOOL_DIR=str(tools), UV_TOOL_BIN_DIR=str(bin_dir), UV_PYTHON_DOWNLOADS="never",
        PATH=f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin", XDG_CACHE_HOME=str(tmp_path / "xdg-cache"),
        HF_HUB_OFFLINE="1",  # the default model must need no download
    )
    _run([sys.executable, "-m", "uv", "tool", "install", "--python", sys.executable, str(wheel)], env, timeout=600)
    kbls_exe = shutil.which("kbls", path=env["PATH"])
    assert kbls_exe == str(bin_dir / "kbls")
    assert _run([kbls_exe, "--version"], env).stdout.strip() == f"kbls {kbls.__version__}"
    installed_at = _run(
        [str(tools / "kbls" / "bin" / "python"), "-c", "import kbls; print(kbls.__file__)"], env
    ).stdout.strip()
    assert Path(installed_at).is_relative_to(tools), f"kbls imported from {installed_at}, not the tool environment"

    notes, store = tmp_path / "notes", tmp_path / "store"
    shutil.copytree(FIXTURES, notes)
    report = json.loads(_run([kbls_exe, "index", "--root", str(notes), "--store", str(store), "--json"], env).stdout)
    assert report["files"] >= 5 and report["embedded"] == report["chunks"] > 0
    hits = json.loads(
        _run(
            [kbls_exe, "search", "who owns a value after it is moved", "--root", str(notes), "--store", str(store),
             "--mode", "semantic", "--limit", "3", "--json"],
            env,
        ).stdout
    )
    assert hits and hits[0]["path"] == "rust/ownership.md"
    assert _mcp_search(kbls_exe, notes, store, env) == "rust/ownership.md"  # the MCP SDK came with the wheel


def _mcp_search(kbls_exe: str, notes: Path, store: Path, env: dict[str, str]) -> str:
    """The first hit's path of a `search` tool call to the installed `kbls mcp`."""
    params = StdioServerParameters(command=kbls_exe, args=["mcp", "--root", str(notes), "--store", str(store)], env=env)

    async def main() -> str:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            with anyio.fail_after(120):
                result = await session.call_tool("search", {"query": "who owns a value after it is moved", "limit": 1})
        assert not result.is_error and result.structured_content is not None, result.content
        path: str = result.structured_content["hits"][0]["path"]
        return path

    return anyio.run(main)
