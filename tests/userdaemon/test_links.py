"""Link completion and definition through the per-user daemon: each client's own roots only.

Two clients share one daemon, each with its own root; a client gets completions and link targets
for notes of its folder, and nothing for an open note of the other client's folder (the daemon
has that root open, but it is not this client's).
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from tests.support.corpus import write_config
from tests.support.link_corpus import SLEEPLESS, write_link_workspace
from tests.support.lsp_client import LspSession
from tests.support.user_daemon import DaemonEnv


def _root(tmp_path: Path, name: str, style: str) -> Path:
    root = write_link_workspace(tmp_path / name, style)
    write_config(root)
    return root


def test_link_features_answer_within_each_clients_own_roots(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    alpha, beta = _root(tmp_path, "alpha", "title"), _root(tmp_path, "beta", "path")
    first = LspSession([alpha], tmp_path, env=daemon_env.env, name="alpha", daemon=True)
    second = LspSession([beta], tmp_path, env=daemon_env.env, name="beta", daemon=True)
    try:
        first.wait_ready()
        second.wait_ready()
        text = f"# Today\n\n{SLEEPLESS}[[\n[[Index funds]]\n"
        mine = first.open_document(alpha / "today.md", text)
        found = first.complete(mine, 2, len(SLEEPLESS) + 2)
        assert isinstance(found, types.CompletionList) and found.items
        assert found.items[0].label == "Sleep hygiene"
        assert [loc.uri for loc in first.definition(mine, 3, 4)] == [(alpha / "finance/index-funds.md").as_uri()]
        # beta's note is open in the daemon (second client) but outside the first client's folders.
        theirs = first.open_document(beta / "today.md", text)
        assert first.complete(theirs, 2, len(SLEEPLESS) + 2) is None
        assert not first.definition(theirs, 3, 4)
        other = second.complete(second.open_document(beta / "today.md", text), 2, len(SLEEPLESS) + 2)
        assert isinstance(other, types.CompletionList) and other.items
        assert isinstance(other.items[0].text_edit, types.TextEdit)
        assert other.items[0].text_edit.new_text == "health/sleep|Sleep hygiene]]"
    finally:
        first.close()
        second.close()
