"""Issue 6, "Hostile input" (config): every key with a wrong type or value gives an error that
names the file, the key and what was expected. The keys are enumerated from the `Config`
structs, so a key added later is covered without editing this test.
"""

from __future__ import annotations

import shutil
import typing
from pathlib import Path

import msgspec
import pytest
import yaml
from tests.support.corpus import REPO, write_config
from tests.support.lsp_client import LspSession
from tests.support.processes import assert_no_traceback, run_kbls

from kbls.config import Config, load_config
from kbls.errors import ConfigError


def _leaves(struct: type, prefix: str = "") -> list[tuple[str, typing.Any]]:
    out = []
    hints = typing.get_type_hints(struct)
    for field in msgspec.structs.fields(struct):
        key = prefix + field.name
        kind = hints[field.name]
        if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
            out.append((key, kind))
            out.extend(_leaves(kind, key + "."))
        else:
            out.append((key, kind))
    return out


def _wrong_values(kind: typing.Any) -> list[typing.Any]:
    """Values of the wrong type for `kind`, and out-of-range ones for numbers."""
    args = set(typing.get_args(kind))
    origin = typing.get_origin(kind)
    if kind is bool:
        return ["yes please", 3]
    if kind is int or args == {int, type(None)}:
        return ["many", [1], -(10**6), 10**13]
    if kind is float:
        return ["much", -1.0, float("nan"), float("inf")]
    if kind is str or args == {str, type(None)}:
        return [7, ["a"]]
    if origin is list:
        return [3, "not a list", [1, 2]]
    if origin is typing.Literal:
        return ["no-such-choice", 1]
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return [5, "text", ["a"]]
    raise AssertionError(f"no wrong values known for {kind}")


def _nested(key: str, value: typing.Any) -> dict[str, typing.Any]:
    parts = key.split(".")
    data: dict[str, typing.Any] = {parts[-1]: value}
    for part in reversed(parts[:-1]):
        data = {part: data}
    return data


CASES = [(key, value) for key, kind in _leaves(Config) for value in _wrong_values(kind)]


@pytest.mark.parametrize("key,value", CASES, ids=[f"{k}={str(v)[:12]}" for k, v in CASES])
def test_a_wrong_value_names_file_key_and_expectation(tmp_path: Path, key: str, value: typing.Any) -> None:
    (tmp_path / ".kbls.yaml").write_text(yaml.safe_dump(_nested(key, value)))
    try:
        load_config(tmp_path)
    except ConfigError as exc:
        message = str(exc)
    else:
        if key == "search.rrf_k" and value == 10**13:
            return  # any positive fusion constant is valid: a huge one only flattens the scores
        raise AssertionError(f"{key}: {value!r} was accepted")
    assert str(tmp_path / ".kbls.yaml") in message, message
    leaf = key.rsplit(".", 1)[-1]
    assert leaf in message, f"the key {key} is not named: {message}"
    if "." in key:
        assert key.split(".")[0] in message, f"the section of {key} is not named: {message}"
    assert "xpected" in message, f"no expectation in: {message}"


def test_an_unknown_key_lists_the_known_ones(tmp_path: Path) -> None:
    (tmp_path / ".kbls.yaml").write_text("search:\n  limt: 5\n")
    with pytest.raises(ConfigError, match=r"limt.*search.*expected one of: .*limit"):
        load_config(tmp_path)


def test_a_file_that_is_not_a_mapping_or_not_yaml_is_named(tmp_path: Path) -> None:
    for text in ("- a\n- b\n", "key: [unclosed\n", "\xff\xfe"):
        (tmp_path / ".kbls.yaml").write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode())
        with pytest.raises(ConfigError, match=str(tmp_path / ".kbls.yaml")):
            load_config(tmp_path)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("exclude: [drafts/]\nsearch: {limit: 5}\nupdated: 2024-02-30\n", "not valid YAML"),
        ("max_file_bytes: !!int lots\n", "not valid YAML"),
        ("search: {mode: !!bool maybe}\n", "not valid YAML"),
        ("include: " + "[" * 3000 + "\n", "nested too deeply"),
        ("include: ['**/*.md', 'notes\\']\n", "include: 'notes\\\\' is not a valid pattern"),
        ("exclude: ['\\']\n", "exclude: '\\\\' is not a valid pattern"),
        ("exclude: ['notes/[z-a].md']\n", "exclude: 'notes/[z-a].md' is not a valid pattern"),
    ],
    ids=[
        "impossible-date", "bad-int-tag", "bad-bool-tag", "nested-5000-deep", "bad-include-glob", "bad-exclude-glob",
        "bad-range-glob",
    ],
)
def test_yaml_values_or_globs_that_cannot_be_built_are_config_errors(tmp_path: Path, text: str, named: str) -> None:
    """PyYAML raised ValueError/KeyError/RecursionError (not YAMLError) and pathspec its own
    error for a trailing backslash: every command died with a traceback (exit 1)."""
    (tmp_path / ".kbls.yaml").write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    assert str(raised.value).startswith(f"{tmp_path / '.kbls.yaml'}: ") and named in str(raised.value), raised.value


def test_cli_reports_a_config_yaml_cannot_build_without_a_traceback(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / ".kbls.yaml").write_text("exclude: ['drafts\\']\nreviewed: 2024-02-30\n")
    proc = run_kbls(["status", "--root", str(root)], tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 2 and ".kbls.yaml: not valid YAML" in proc.stderr and "day is out of range" in proc.stderr


def test_cli_reports_a_bad_config_without_a_traceback(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    write_config(root, extra="search:\n  limit: 0\n")
    proc = run_kbls(["index", "--root", str(root)], tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 2
    assert ".kbls.yaml" in proc.stderr and "search.limit" in proc.stderr and "expected" in proc.stderr


def test_daemon_shows_bad_init_options_and_keeps_serving(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    shutil.copytree(REPO / "tests" / "fixtures" / "notes", root)
    write_config(root)
    daemon = LspSession([root], tmp_path, init_options={"search": {"limit": "ten"}, "model": {"batchSize": -4}})
    try:
        daemon.wait_ready()
        shown = " ".join(daemon.shown())
        assert "limit" in shown and "xpected" in shown, shown
        assert daemon.search("who owns a value after it is moved").hits
    finally:
        daemon.close()


def _dict_bomb(levels: int = 9, width: int = 9, under: str = "search") -> str:
    lines = ["l0: &l0 {" + ", ".join(f"k{j}: lol" for j in range(width)) + "}"]
    lines += [f"l{i}: &l{i} {{" + ", ".join(f"k{j}: *l{i - 1}" for j in range(width)) + "}" for i in range(1, levels)]
    return "\n".join(lines) + f"\n{under}: *l{levels - 1}\n"


@pytest.mark.parametrize(
    "text",
    [_dict_bomb(), _dict_bomb(under="model"), "search: &a {limit: 5, again: *a}\n", "include: &a [*a]\n"],
    ids=["dict-bomb", "dict-bomb-in-model", "recursive-mapping", "recursive-list"],
)
def test_a_yaml_bomb_or_loop_in_the_config_is_an_error_at_once(tmp_path: Path, text: str) -> None:
    import time

    (tmp_path / ".kbls.yaml").write_text(text)
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=str(tmp_path / ".kbls.yaml")):
        load_config(tmp_path)
    assert time.perf_counter() - started < 2


@pytest.mark.parametrize(("setting", "what"), [(".", "is the workspace root itself"), ("..", "contains the workspace root")])
def test_a_store_at_or_above_the_root_is_a_config_error(tmp_path: Path, setting: str, what: str) -> None:
    """Issue 14: `store: .` or `store: ..` indexed 0 files (the scan leaves out the store's
    folder, here the whole root) and exited 0 without a word."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nsome text\n")
    (root / ".kbls.yaml").write_text(f"store: {setting}\n")
    for command in (["index"], ["status"], ["search", "text"]):
        proc = run_kbls([*command, "--root", str(root)], tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 2, (command, proc.stderr)
        assert f"store: {setting}" in proc.stderr and what in proc.stderr and ".kbls.yaml" in proc.stderr, proc.stderr
    assert sorted(p.name for p in root.iterdir()) == [".kbls.yaml", "a.md"]  # nothing was written
    proc = run_kbls(["index", "--root", str(root), "--store", str(tmp_path)], tmp_path)
    assert proc.returncode == 2 and "--store" in proc.stderr and "contains the workspace root" in proc.stderr
