"""`kb/tags` and `kb/notes` through the per-user daemon: each client lists its own folders only."""

from __future__ import annotations

from pathlib import Path

import msgspec
from tests.support.corpus import make_workspace, write, write_config
from tests.support.lsp_client import LspSession
from tests.support.user_daemon import DaemonEnv

from kbls.protocol import wire


def _paths(session: LspSession) -> list[str]:
    answer = msgspec.convert(session.request("kb/notes", {"limit": 200}), wire.NotesResult)
    return [n.path for n in answer.notes]


def _tags(session: LspSession) -> list[str]:
    return [t.name for t in msgspec.convert(session.request("kb/tags", {}), wire.TagsResult).tags]


def test_each_client_of_the_shared_daemon_lists_its_own_folders(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    alpha = make_workspace(tmp_path, "alpha")
    beta = tmp_path / "beta"
    write(beta, "only-beta.md", "# Only beta\n\nA note about #betatag things.\n")
    write_config(beta)
    first = LspSession([alpha], tmp_path, env=daemon_env.env, name="alpha", daemon=True)
    second = LspSession([beta], tmp_path, env=daemon_env.env, name="beta", daemon=True)
    try:
        first.wait_ready()
        second.wait_ready()
        assert _paths(second) == ["only-beta.md"]
        assert _tags(second) == ["betatag"]
        mine = _paths(first)
        assert mine and "only-beta.md" not in mine
        assert "betatag" not in _tags(first)
        assert "rust" in _tags(first)
    finally:
        first.close()
        second.close()


