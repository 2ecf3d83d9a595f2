"""References and rename through the per-user daemon: a client gets the links of its own root,
and nothing for a note of another client's root that the daemon has open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types
from tests.support.backlink_vault import CAFE, HUB, NOTES, write_vault
from tests.support.corpus import write_config
from tests.support.lsp_client import LspSession
from tests.support.user_daemon import DaemonEnv


def _references(session: LspSession, uri: str, line: int) -> list[str]:
    params = types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri), position=types.Position(line, 1),
        context=types.ReferenceContext(include_declaration=False),
    )
    found: Any = session._run(session.client.text_document_references_async(params))
    return sorted(loc.uri for loc in found or [])


def test_references_and_rename_answer_within_each_clients_own_roots(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    mine, theirs = write_vault(tmp_path / "mine"), write_vault(tmp_path / "theirs")
    write_config(mine)
    write_config(theirs)
    first = LspSession([mine], tmp_path, env=daemon_env.env, name="mine", daemon=True)
    second = LspSession([theirs], tmp_path, env=daemon_env.env, name="theirs", daemon=True)
    try:
        first.wait_ready()
        second.wait_ready()
        uri = first.open_document(mine / CAFE, NOTES[CAFE])
        found = _references(first, uri, 5)
        assert len(found) == 8 and all(u.startswith(mine.as_uri()) for u in found)
        assert (mine / HUB).as_uri() in found
        rename: Any = first._run(first.client.text_document_rename_async(
            types.RenameParams(types.TextDocumentIdentifier(uri), types.Position(1, 9), "Crema")
        ))
        assert rename is not None
        edited = set(rename.changes or {})
        assert (mine / HUB).as_uri() in edited and all(u.startswith(mine.as_uri()) for u in edited)
        # the other client's note, open in the shared daemon, is not this client's to answer
        other = first.open_document(theirs / CAFE, NOTES[CAFE])
        assert _references(first, other, 5) == []
        assert len(_references(second, second.open_document(theirs / CAFE, NOTES[CAFE]), 5)) == 8
    finally:
        first.close()
        second.close()
