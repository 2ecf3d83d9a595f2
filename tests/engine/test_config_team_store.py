"""A team store that a workspace's own `.kbls.yaml` names (a cloned repository's) is used only when
the user trusts its host (`KBLS_TRUSTED_STORES`); the user's own `--store` or editor settings
need nothing. Refused, it is a config error saying what to set, raised before any connection."""

from __future__ import annotations

from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict
from tests.support.processes import child_env, run_kbls

from kbls.config import CONFIG_FILE, load_config, resolve_store
from kbls.errors import ConfigError
from kbls.storage.postgres.location import PgLocation, store_host

REMOTE = "postgresql://db.example.invalid:5433/kb"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("KBLS_TRUSTED_STORES", raising=False)
    folder = tmp_path / "cloned répo #1"
    folder.mkdir()
    (folder / CONFIG_FILE).write_text(f"store: {REMOTE}\n", encoding="utf-8")
    return folder


def test_a_workspace_team_store_is_refused_without_consent(root: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(root)
    message = str(raised.value)
    assert str(root / CONFIG_FILE) in message and "not one you trust" in message
    assert "KBLS_TRUSTED_STORES=db.example.invalid" in message and "docs/team.md" in message


def test_a_trusted_host_is_used(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBLS_TRUSTED_STORES", "team.example.com, DB.example.invalid")
    config, _ = load_config(root)
    location = resolve_store(root, config)
    assert isinstance(location, PgLocation) and location.conninfo == REMOTE
    monkeypatch.setenv("KBLS_TRUSTED_STORES", "team.example.com db.example")  # not a prefix match
    with pytest.raises(ConfigError):
        load_config(root)


def test_the_users_own_store_needs_no_consent(root: Path) -> None:
    own = "postgresql:///kb?service=team"
    config, _ = load_config(root, {"store": own})  # editor settings (initializationOptions)
    assert isinstance(resolve_store(root, config), PgLocation) and config.store == own
    config, _ = load_config(root, store_given=True)  # --store
    location = resolve_store(root, config, own)
    assert isinstance(location, PgLocation) and location.conninfo == "postgresql:///kb?service=team"
    with pytest.raises(ConfigError):  # other overrides do not vouch for the file's store
        load_config(root, {"search": {"limit": 5}})


def test_a_url_without_a_host_stays_one_libpq_reads(root: Path) -> None:
    assert conninfo_to_dict(PgLocation.parse("postgresql:///?service=kb", root, "--store").conninfo) == {"service": "kb"}
    location = PgLocation.parse("postgresql:///kb?host=/run/postgresql&kbls_root=handbook", root, "--store")
    assert conninfo_to_dict(location.conninfo) == {"dbname": "kb", "host": "/run/postgresql"}
    assert location.root_name == "handbook"


def test_hosts_are_named_as_libpq_reads_them() -> None:
    assert store_host("postgresql://u@db.example.com:5432/kb") == "db.example.com"
    assert store_host("postgresql:///kb?host=/run/postgresql") == "/run/postgresql"
    assert store_host("postgresql:///?service=kb") == "service:kb"
    assert store_host("postgresql:///kb") == "localhost"


def test_the_cli_exits_2_and_the_ingest_with_store_is_not_asked(root: Path, tmp_path: Path) -> None:
    result = run_kbls(["status", "--root", str(root)], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "KBLS_TRUSTED_STORES=db.example.invalid" in result.stderr and "Traceback" not in result.stderr
    # the user's --store: the file's store is not consulted (the local server is not there: a connection error)
    explicit = run_kbls(["status", "--root", str(root), "--store", "postgresql:///nowhere?host=/nonexistent"], tmp_path)
    assert "KBLS_TRUSTED_STORES" not in explicit.stderr and "cannot connect" in explicit.stderr, explicit.stderr
    trusted = run_kbls(
        ["status", "--root", str(root)], tmp_path, env=child_env(tmp_path, KBLS_TRUSTED_STORES="db.example.invalid")
    )
    assert "KBLS_TRUSTED_STORES" not in trusted.stderr and "cannot connect" in trusted.stderr, trusted.stderr
