"""The README's VS Code step, verbatim, as a new user runs it: in a fresh `git clone` (of the
committed HEAD: uncommitted changes are not in it) under a folder with a space and an accent,
with a PATH whose `python3` is the system Python, which has no PyPA `build` module (checked
first). `npm ci && npm run package` must leave a VSIX carrying the server wheel of its version,
and no setuptools litter in the clone. Without a Python, or with one that cannot make a venv, the
packaging stops with a message that says what to install.

~1 min on two cores with warm npm and pip caches (npm ci of the clone is most of it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

import kbls

REPO = Path(__file__).resolve().parents[2]
STEP = "cd vscode-extension && npm ci && npm run package"
WHEEL = f"kbls-{kbls.__version__}-py3-none-any.whl"
pytestmark = pytest.mark.packaging


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed")
    return found


def _system_path() -> str:
    """node's and npm's folders, then the system's: no dev venv, no pyenv, no uv."""
    folders = [str(Path(_tool(n)).resolve().parent) for n in ("node", "npm")] + ["/usr/bin", "/bin"]
    return os.pathsep.join(dict.fromkeys(folders))


def _user_env(path: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "KBLS_PYTHON", "PYENV_VERSION")
        and not k.startswith("npm_")
    }
    env.update(PATH=path, npm_config_fund="false", npm_config_audit="false", npm_config_update_notifier="false")
    return env


def test_the_readme_vscode_step_packages_a_vsix_in_a_fresh_clone(tmp_path: Path) -> None:
    assert STEP in (REPO / "README.md").read_text(encoding="utf-8"), "the README's VS Code step changed: update STEP"
    env = _user_env(_system_path())
    python3 = shutil.which("python3", path=env["PATH"])
    assert python3 is not None, "no system python3 to test with"
    no_build = subprocess.run([python3, "-c", "import build"], env=env, capture_output=True, text=True, timeout=60)
    assert no_build.returncode != 0 and "No module named 'build'" in no_build.stderr, (
        f"{python3} has the `build` module: this test needs a system Python without it"
    )

    clone = tmp_path / "My Clones é" / "kbls"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=120)
    result = subprocess.run(
        ["bash", "-c", STEP], cwd=clone, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "making a private build environment with python3" in output, output[-3000:]
    assert f"building {WHEEL} with vscode-extension/.cache/wheel-venv/bin/python -m pip wheel" in output, output[-3000:]

    vsix = clone / "vscode-extension" / "kbls.vsix"
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        assert "extension/dist/extension.js" in names
        with archive.open(f"extension/server/{WHEEL}") as carried, zipfile.ZipFile(carried) as wheel:
            init = wheel.read("kbls/__init__.py").decode()
            assert f'__version__ = "{kbls.__version__}"' in init
            assert "kbls/model/tokenizer.json" in wheel.namelist()
    # The wheel was built from a copy: no setuptools build/ or egg-info in the clone.
    assert not (clone / "build").exists()
    assert not list((clone / "server").glob("*.egg-info"))


def _script_only(tmp_path: Path) -> Path:
    """The packaging script with the files it reads, and no wheel built yet."""
    root = tmp_path / "kbls"
    for rel in ("vscode-extension/scripts/bundle-wheel.mjs", "vscode-extension/package.json",
                "server/kbls/__init__.py", "pyproject.toml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, root / rel)
    return root


def _bundle(root: Path, path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_tool("node"), "vscode-extension/scripts/bundle-wheel.mjs"], cwd=root, env=_user_env(path),
        capture_output=True, text=True, timeout=120,
    )


def test_without_python3_the_packaging_says_what_to_install(tmp_path: Path) -> None:
    root = _script_only(tmp_path)
    empty = tmp_path / "bin"
    empty.mkdir()
    result = _bundle(root, str(empty))
    assert result.returncode == 1
    assert "python3 was not found on PATH" in result.stderr, result.stderr
    assert "sudo apt install python3 python3-venv" in result.stderr and "KBLS_PYTHON" in result.stderr


def test_without_python3_venv_the_packaging_names_the_debian_package(tmp_path: Path) -> None:
    root = _script_only(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # Debian's python3 without python3-venv: the interpreter runs, `-m venv` fails on ensurepip.
    fake = bin_dir / "python3"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = -m ] && [ "$2" = venv ]; then\n'
        "  echo 'The virtual environment was not created successfully because ensurepip is not\n"
        "available.  On Debian/Ubuntu systems, you need to install the python3-venv package' >&2\n"
        "  exit 1\n"
        "fi\n"
        f'exec {shutil.which("python3", path="/usr/bin:/bin") or "/usr/bin/python3"} "$@"\n'
    )
    fake.chmod(0o755)
    result = _bundle(root, str(bin_dir))
    assert result.returncode == 1
    assert "making a private build environment with python3" in result.stdout
    assert "sudo apt install python3-venv" in result.stderr, result.stderr
    assert not (root / "vscode-extension" / ".cache" / "wheel-venv").exists()
