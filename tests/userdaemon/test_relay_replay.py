"""The relay opens the editor's documents again in a new daemon, unsaved changes included.

An editor has two notes open, one as saved and one with changes it has not saved; the per-user
daemon is killed; the relay reconnects to a new daemon. A keystroke in each note must reach a
daemon that knows the note's text: link completion and definition answer in both, and the
editor is never shown "Error in server" (the new daemon knew no open document: each keystroke's
`didChange` failed with a KeyError, and completion had no text to read).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from lsprotocol import types
from tests.support.corpus import write, write_config
from tests.support.link_corpus import SLEEPLESS, write_link_workspace
from tests.support.lsp_client import LspSession
from tests.support.user_daemon import DaemonEnv, daemon_pids

from kbls.userdaemon.session import OpenDocuments
from kbls.userdaemon.spawn import wait_gone

FUNDS = "finance/index-funds.md"


def _answers_links(editor: LspSession, uri: str, line: int) -> None:
    """`[[` typed at the end of `line` (the sleepless paragraph) completes by meaning; the
    `[[Index funds]]` on the next line leads to its note."""
    found = editor.complete(uri, line, len(SLEEPLESS) + 2)
    assert isinstance(found, types.CompletionList) and found.items, found
    # by meaning: the sleep note (the other journal note, holding the same paragraph, may come first)
    assert "Sleep hygiene" in [item.label for item in found.items[:2]], [item.label for item in found.items]
    assert [loc.uri for loc in editor.definition(uri, line + 1, 4)] == [editor.folders[0].joinpath(FUNDS).as_uri()]


def test_open_notes_and_unsaved_changes_survive_a_killed_daemon(tmp_path: Path, daemon_env: DaemonEnv) -> None:
    root = write_link_workspace(tmp_path / "notes", "title")
    write_config(root)
    saved = write(root, "journal/monday.md", f"# Monday\n\n{SLEEPLESS}\n[[Index funds]]\n")
    draft = write(root, "journal/tuesday.md", "# Tuesday\n\nNothing yet.\n")
    with LspSession([root], tmp_path, env=daemon_env.env, daemon=True) as editor:
        editor.wait_ready()
        monday = editor.open_document(saved, saved.read_text(encoding="utf-8"))
        tuesday = editor.open_document(draft, draft.read_text(encoding="utf-8"))
        editor.type_text(tuesday, 2, 0, f"{SLEEPLESS}[[\n[[Index funds]]\n", version=2)  # not saved
        _answers_links(editor, tuesday, 2)
        assert editor.definition(monday, 3, 4)

        [first] = daemon_pids(Path(daemon_env.env["XDG_RUNTIME_DIR"]))
        os.kill(first, signal.SIGKILL)
        assert wait_gone(first, 10)
        editor.wait_for(lambda: editor.alive() and _status(editor), timeout=120, what="the relay to reconnect")
        editor.wait_ready()

        # One keystroke in each note: `[[` in the saved one, a space after the `#` in the draft.
        editor.type_text(monday, 2, len(SLEEPLESS), "[[", version=2)
        editor.type_text(tuesday, 0, 1, " ", version=3)
        _answers_links(editor, monday, 2)
        _answers_links(editor, tuesday, 2)
        assert not [m for m in editor.shown() if "Error in server" in str(m)], editor.shown()
        [second] = daemon_pids(Path(daemon_env.env["XDG_RUNTIME_DIR"]))
        assert second != first


def _status(editor: LspSession) -> bool:
    try:
        return editor.status().version != ""
    except Exception:  # the request that raced the kill fails with "try again"
        return False


def test_the_record_of_open_documents_follows_the_editor() -> None:
    """Opened, changed in ranges (UTF-16 positions past an emoji), replaced whole and closed, as the
    daemon applies them; a change that does not fit drops the record instead of keeping it wrong."""
    documents = OpenDocuments()
    open_params = {"textDocument": {"uri": "file:///a.md", "languageId": "markdown", "version": 1, "text": "😀 a\nb\n"}}
    documents.note("textDocument/didOpen", open_params)
    change = {"range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 4}}, "text": "x"}
    documents.note("textDocument/didChange", {"textDocument": {"uri": "file:///a.md", "version": 2}, "contentChanges": [change]})
    assert documents.text("file:///a.md") == "😀 x\nb\n"
    [replayed] = documents.reopen()
    assert replayed["params"]["textDocument"] == {
        "uri": "file:///a.md",
        "languageId": "markdown",
        "version": 2,
        "text": "😀 x\nb\n",
    }
    documents.note(
        "textDocument/didChange", {"textDocument": {"uri": "file:///a.md", "version": 3}, "contentChanges": [{"text": "new"}]}
    )
    assert documents.text("file:///a.md") == "new"
    documents.note(
        "textDocument/didChange", {"textDocument": {"uri": "file:///a.md", "version": 4}, "contentChanges": [{"range": "x"}]}
    )
    assert documents.text("file:///a.md") is None and documents.reopen() == []
    documents.note("textDocument/didOpen", open_params)
    documents.note("textDocument/didClose", {"textDocument": {"uri": "file:///a.md"}})
    assert len(documents) == 0
