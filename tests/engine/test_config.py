"""`.kbls.yaml` and editor overrides: defaults, precise errors, store resolution, camelCase."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbls.config import CONFIG_FILE, Config, load_config, resolve_store_dir, user_cache_dir
from kbls.errors import ConfigError


def test_defaults_without_a_file(tmp_path: Path) -> None:
    config, path = load_config(tmp_path)
    assert path is None
    assert config == Config()
    assert config.search.mode == "hybrid" and config.chunk.max_tokens == 256
    assert "**/*.md" in config.include and config.respect_gitignore


def test_an_empty_file_means_defaults(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text("")
    config, path = load_config(tmp_path)
    assert path == tmp_path / CONFIG_FILE and config == Config()


def test_a_file_overrides_nested_keys(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text("search:\n  limit: 25\nchunk:\n  max_tokens: 128\n")
    config, _ = load_config(tmp_path)
    assert config.search.limit == 25 and config.search.mode == "hybrid"
    assert config.chunk.max_tokens == 128


@pytest.mark.parametrize(
    ("yaml_text", "key", "expected"),
    [
        ("model:\n  batch_size: lots\n", "model.batch_size", "int"),
        ("search:\n  mode: fuzzy\n", "search.mode", "hybrid"),
        ("exclude: notes/\n", "exclude", "array"),
        ("respect_gitignore: 3\n", "respect_gitignore", "bool"),
    ],
)
def test_a_wrong_type_names_the_file_the_key_and_what_was_expected(
    tmp_path: Path, yaml_text: str, key: str, expected: str,
) -> None:
    (tmp_path / CONFIG_FILE).write_text(yaml_text)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    message = str(caught.value)
    assert str(tmp_path / CONFIG_FILE) in message
    assert key in message
    assert expected in message


def test_a_value_out_of_range_names_the_key_and_the_range(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text("model:\n  batch_size: 0\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    message = str(caught.value)
    assert str(tmp_path / CONFIG_FILE) in message and "batch_size" in message and "1 to 1024" in message


def test_an_unknown_key_names_the_file_and_the_key(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text("search:\n  limt: 5\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    message = str(caught.value)
    assert str(tmp_path / CONFIG_FILE) in message and "limt" in message and "search" in message
    assert "expected one of" in message and "limit" in message


def test_a_top_level_unknown_key_is_named(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text("stor: here\n")
    with pytest.raises(ConfigError, match="stor") as caught:
        load_config(tmp_path)
    assert "expected one of" in str(caught.value) and "store" in str(caught.value)


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text("search: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML") as caught:
        load_config(tmp_path)
    assert str(tmp_path / CONFIG_FILE) in str(caught.value)


def test_relative_store_resolves_against_the_config_files_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    (root / CONFIG_FILE).write_text("store: ../kb-store\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the current folder must not matter
    config, _ = load_config(root)
    assert resolve_store_dir(root, config) == (tmp_path / "kb-store").resolve()


def test_an_explicit_store_wins_over_the_config(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    (root / CONFIG_FILE).write_text("store: ../from-config\n")
    config, _ = load_config(root)
    assert resolve_store_dir(root, config, tmp_path / "explicit") == (tmp_path / "explicit").resolve()


def test_without_store_the_user_cache_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config, _ = load_config(tmp_path)
    store = resolve_store_dir(tmp_path, config)
    assert store.parent == tmp_path / "cache" / "kbls"


def test_a_relative_xdg_cache_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The XDG spec calls a relative path invalid: the daemon (cwd /) and its relay would read it
    as two folders."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert user_cache_dir() == tmp_path / "home" / ".cache" / "kbls"


def test_camel_case_overrides_are_applied_over_the_file(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text("search:\n  limit: 25\n  rrf_k: 10\n")
    config, _ = load_config(
        tmp_path, {"search": {"rrfK": 30, "lexicalWeight": 0.5}, "maxFileBytes": 1234, "respectGitignore": False}
    )
    assert config.search.rrf_k == 30 and config.search.lexical_weight == 0.5
    assert config.search.limit == 25  # untouched keys of the file survive the merge
    assert config.max_file_bytes == 1234 and config.respect_gitignore is False


def test_a_bad_override_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, {"chunk": {"maxTokens": "big"}})
    assert "chunk.max_tokens" in str(caught.value) and "initializationOptions" in str(caught.value)
