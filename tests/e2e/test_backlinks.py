"""References, backlinks and rename over LSP with the real `kbls serve`, against a vault that
links one note in every way (`tests/support/backlink_vault.py`): references on a note, a
heading, a link and a tag; `kb/backlinks`; rename of a title, a heading and a tag;
`workspace/willRenameFiles` for a file and a folder; an open note's unsaved text and version.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from tests.support.backlink_vault import CAFE, CODE, HUB, NOTES, NOTES_A, NOTES_B, PLAIN, READER, write_vault
from tests.support.corpus import write_config
from tests.support.lsp_client import LspSession


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = write_vault(tmp_path_factory.mktemp("backlinks") / "my vault é")
    write_config(made)
    return made


@pytest.fixture(scope="module")
def session(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    logs = tmp_path_factory.mktemp("backlinks-logs")
    with LspSession(
        [root], logs, workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
        file_operations=types.FileOperationClientCapabilities(will_rename=True),
        text_document=types.TextDocumentClientCapabilities(rename=types.RenameClientCapabilities(prepare_support=True)),
    ) as s:
        s.wait_ready()
        assert s.initialize_result.capabilities.references_provider
        assert s.initialize_result.capabilities.workspace.file_operations.will_rename  # type: ignore[union-attr]
        yield s


@pytest.fixture
def opened(session: LspSession, root: Path) -> Iterator[list[str]]:
    """URIs opened by a test, closed after it (the module's session is shared)."""
    uris: list[str] = []
    yield uris
    for uri in uris:
        session.notify(types.TEXT_DOCUMENT_DID_CLOSE, types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))


def _open(session: LspSession, opened: list[str], path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    content = path.read_text(encoding="utf-8") if text is None else text
    item = types.TextDocumentItem(uri=uri, language_id="markdown", version=version, text=content)
    session.notify(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=item))
    opened.append(uri)
    return uri


def _where(text: str, needle: str, offset: int = 1) -> tuple[int, int]:
    """(line, UTF-16 character) of `offset` characters into the first `needle` of `text`."""
    at = text.index(needle) + offset
    line = text.count("\n", 0, at)
    column = at - (text.rfind("\n", 0, at) + 1)
    return line, len(text.split("\n")[line][:column].encode("utf-16-le")) // 2


def _references(session: LspSession, uri: str, line: int, character: int) -> list[tuple[str, int]]:
    params = types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri), position=types.Position(line, character),
        context=types.ReferenceContext(include_declaration=True),
    )
    found: Any = session._run(session.client.text_document_references_async(params))
    return sorted((loc.uri, loc.range.start.line) for loc in found or [])


def _rel(root: Path, uri: str) -> str:
    return uri[len(root.as_uri()) + 1 :]


def _lines(root: Path, found: list[tuple[str, int]]) -> list[tuple[str, int]]:
    from urllib.parse import unquote

    return sorted((unquote(_rel(root, uri)), line) for uri, line in found)


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        row = lines[edit.range.start.line]
        units = row.encode("utf-16-le")
        start, end = edit.range.start.character * 2, edit.range.end.character * 2
        lines[edit.range.start.line] = (units[:start].decode("utf-16-le") + edit.new_text + units[end:].decode("utf-16-le"))
    return "\n".join(lines)


def _edited(session: LspSession, root: Path, edit: types.WorkspaceEdit | None) -> dict[str, tuple[str, int | None]]:
    """rel path -> (its text with the edits applied, the version the edits carry)."""
    from urllib.parse import unquote

    assert edit is not None and edit.document_changes is not None
    out = {}
    for change in edit.document_changes:
        assert isinstance(change, types.TextDocumentEdit)
        rel = unquote(_rel(root, change.text_document.uri))
        assert (root / rel).is_file(), rel  # never an edit outside the root
        text = NOTES[rel]
        out[rel] = (_apply(text, [e for e in change.edits if isinstance(e, types.TextEdit)]), change.text_document.version)
    return out


def _rename(session: LspSession, uri: str, line: int, character: int, name: str) -> types.WorkspaceEdit | None:
    params = types.RenameParams(types.TextDocumentIdentifier(uri), types.Position(line, character), name)
    result: Any = session._run(session.client.text_document_rename_async(params))
    return result


# -- references ------------------------------------------------------------------------------
def test_references_on_a_note_are_every_link_to_it_and_none_in_code(session: LspSession, root: Path, opened: list[str]) -> None:
    uri = _open(session, opened, root / CAFE)
    line, character = _where(NOTES[CAFE], "Intro")
    assert _lines(root, _references(session, uri, line, character)) == [
        (READER, 2), (READER, 2), (HUB, 2), (HUB, 3), (HUB, 4), (HUB, 5), (HUB, 6), (HUB, 7),
    ]
    assert not any(path == CODE for path, _ in _lines(root, _references(session, uri, 1, 8)))


def test_references_on_a_heading_are_its_anchors_as_text_slug_and_within(
    session: LspSession, root: Path, opened: list[str],
) -> None:
    uri = _open(session, opened, root / CAFE)
    brewing = _where(NOTES[CAFE], "## Brewing", 4)
    assert _lines(root, _references(session, uri, *brewing)) == [(HUB, 4), (HUB, 5)]
    milk = _where(NOTES[CAFE], "## Milk", 4)
    assert _lines(root, _references(session, uri, *milk)) == [(CAFE, 9), (READER, 2), (READER, 2)]


def test_references_on_a_link_are_those_of_what_it_names(session: LspSession, root: Path, opened: list[str]) -> None:
    uri = _open(session, opened, root / READER)
    on_link = _where(NOTES[READER], "[[Café Crème#Milk", 3)
    assert _lines(root, _references(session, uri, *on_link)) == [(CAFE, 9), (READER, 2), (READER, 2)]


def test_an_ambiguous_name_is_a_reference_of_the_note_it_opens_only(session: LspSession, root: Path, opened: list[str]) -> None:
    first = _open(session, opened, root / NOTES_A)
    second = _open(session, opened, root / NOTES_B)
    assert _lines(root, _references(session, first, 2, 2)) == [(READER, 4)]
    assert _references(session, second, 2, 2) == []


def test_references_on_a_tag_are_its_inline_and_front_matter_uses(session: LspSession, root: Path, opened: list[str]) -> None:
    uri = _open(session, opened, root / HUB)
    tag = _where(NOTES[HUB], "#drinks", 2)
    assert _lines(root, _references(session, uri, *tag)) == [(CAFE, 3), (HUB, 8)]


def test_kb_backlinks_lists_each_link_with_its_section_and_words(session: LspSession, root: Path) -> None:
    answer = session.request("kb/backlinks", {"uri": (root / CAFE).as_uri()})
    items = answer["backlinks"]
    assert answer["notes"] == 2
    assert [(i["path"], i["range"]["start"]["line"]) for i in items][:2] == [(READER, 2), (READER, 2)]
    assert "[[Café Crème#Milk]]" in items[0]["context"] and items[0]["title"] == "Reader"
    hub = [i for i in items if i["path"] == HUB]
    assert hub[0]["context"] == "- [[Café Crème]] by title"  # a list item, not the whole list
    assert all(i["uri"].startswith(root.as_uri()) for i in items)


def test_kb_backlinks_refuses_a_uri_that_is_no_file(session: LspSession) -> None:
    with pytest.raises(Exception, match="file://"):
        session.request("kb/backlinks", {"uri": "untitled:1"})


def test_a_code_lens_on_the_title_counts_backlinks_and_related_and_opens_the_picker(
    session: LspSession, root: Path, opened: list[str],
) -> None:
    uri = _open(session, opened, root / CAFE)
    params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri))
    lenses: Any = session._run(session.client.text_document_code_lens_async(params))
    assert len(lenses) == 1
    lens = lenses[0]
    assert lens.range.start.line == 1  # the front matter's `title:` line
    assert re.fullmatch(r"2 backlinks · \d+ related", lens.command.title), lens.command.title
    assert (lens.command.command, list(lens.command.arguments)) == ("kbls.showBacklinks", [uri])
    plain = _open(session, opened, root / PLAIN)
    lenses = session._run(session.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(plain))
    ))
    assert lenses[0].range.start.line == 0 and lenses[0].command.title.startswith("1 backlink · ")


# -- rename ----------------------------------------------------------------------------------
def test_prepare_rename_on_a_title_offers_the_title(session: LspSession, root: Path, opened: list[str]) -> None:
    uri = _open(session, opened, root / CAFE)
    params = types.PrepareRenameParams(types.TextDocumentIdentifier(uri), types.Position(1, 9))
    found: Any = session._run(session.client.text_document_prepare_rename_async(params))
    assert found.placeholder == "Café Crème"


def test_prepare_rename_on_plain_text_says_what_can_be_renamed(session: LspSession, root: Path, opened: list[str]) -> None:
    uri = _open(session, opened, root / CAFE)
    params = types.PrepareRenameParams(types.TextDocumentIdentifier(uri), types.Position(5, 2))
    with pytest.raises(Exception, match="title, a heading, a link or a tag"):
        session._run(session.client.text_document_prepare_rename_async(params))


def test_renaming_a_title_rewrites_the_links_by_title_and_leaves_labels_and_paths(
    session: LspSession, root: Path, opened: list[str],
) -> None:
    uri = _open(session, opened, root / CAFE)
    edited = _edited(session, root, _rename(session, uri, 1, 9, "Café au lait"))
    assert edited[CAFE][0].split("\n")[1] == "title: Café au lait"
    hub = edited[HUB][0].split("\n")
    assert hub[2] == "- [[Café au lait]] by title"
    assert hub[4] == "- [[Café au lait#Brewing Notes]] anchor as text"
    assert edited[READER][0].split("\n")[2].startswith("See [[Café au lait#Milk]] and [up](../../Projets/Café%20Crème.md")
    assert hub[3] == NOTES[HUB].split("\n")[3] and hub[7] == NOTES[HUB].split("\n")[7]  # alias, path: unchanged
    assert CODE not in edited


def test_renaming_a_heading_rewrites_its_anchors_in_their_form(session: LspSession, root: Path, opened: list[str]) -> None:
    uri = _open(session, opened, root / CAFE)
    edited = _edited(session, root, _rename(session, uri, *_where(NOTES[CAFE], "## Brewing", 4), "Brewing Steps"))
    assert edited[CAFE][0].split("\n")[7] == "## Brewing Steps"
    hub = edited[HUB][0].split("\n")
    assert hub[4] == "- [[Café Crème#Brewing Steps]] anchor as text"
    assert hub[5] == "- [crème](<Projets/Café Crème.md#brewing-steps>) anchor as slug"
    assert READER not in edited


def test_renaming_a_tag_rewrites_inline_and_front_matter_uses(session: LspSession, root: Path, opened: list[str]) -> None:
    uri = _open(session, opened, root / HUB)
    edited = _edited(session, root, _rename(session, uri, *_where(NOTES[HUB], "#drinks", 2), "beverages"))
    assert edited[HUB][0].split("\n")[8] == "- about #beverages here"
    assert edited[CAFE][0].split("\n")[3] == "tags: [beverages]"


def test_a_rename_edits_an_open_note_as_the_editor_holds_it_with_its_version(
    session: LspSession, root: Path, opened: list[str],
) -> None:
    unsaved = "Unsaved line [[Café Crème]]\n" + NOTES[HUB]
    hub = _open(session, opened, root / HUB, unsaved, version=7)
    uri = _open(session, opened, root / CAFE)
    edit = _rename(session, uri, 1, 9, "Crema")
    assert edit is not None and edit.document_changes is not None
    changes = {
        _rel(root, c.text_document.uri): c for c in edit.document_changes if isinstance(c, types.TextDocumentEdit)
    }
    hub_change = changes[_rel(root, hub)]
    assert hub_change.text_document.version == 7
    after = _apply(unsaved, [e for e in hub_change.edits if isinstance(e, types.TextEdit)]).split("\n")
    assert after[0] == "Unsaved line [[Crema]]" and after[3] == "- [[Crema]] by title"


def test_renaming_a_setext_heading_over_two_lines_replaces_both(session: LspSession, root: Path, opened: list[str]) -> None:
    unsaved = NOTES[CAFE] + "\nMilk and\n  sugar ratios\n---\n\nOne to four.\n"
    uri = _open(session, opened, root / CAFE, unsaved, version=3)
    line, character = _where(unsaved, "Milk and", 2)
    prepared: Any = session._run(session.client.text_document_prepare_rename_async(
        types.PrepareRenameParams(types.TextDocumentIdentifier(uri), types.Position(line, character))
    ))
    assert prepared.placeholder == "Milk and sugar ratios"
    edit = _rename(session, uri, line, character, "Ratios")
    assert edit is not None and edit.document_changes is not None
    (change,) = [c for c in edit.document_changes if isinstance(c, types.TextDocumentEdit) and c.text_document.uri == uri]
    (heading,) = [e for e in change.edits if isinstance(e, types.TextEdit)]
    assert (heading.range.start.line, heading.range.end.line) == (line, line + 1)
    lines = unsaved.split("\n")
    assert heading.new_text + lines[line + 1][heading.range.end.character :] == "Ratios"
    assert lines[line + 2] == "---"  # the underline is kept: still a level 2 heading


# -- file moves ------------------------------------------------------------------------------
def _will_rename(session: LspSession, root: Path, old: str, new: str) -> types.WorkspaceEdit | None:
    params = types.RenameFilesParams([types.FileRename((root / old).as_uri(), (root / new).as_uri())])
    result: Any = session._run(session.client.workspace_will_rename_files_async(params))
    return result


def test_moving_a_note_rewrites_paths_and_file_names_in_their_form(session: LspSession, root: Path) -> None:
    edited = _edited(session, root, _will_rename(session, root, CAFE, "Archive/Café v2.md"))
    hub = edited[HUB][0].split("\n")
    assert hub[2] == NOTES[HUB].split("\n")[2]  # by title: still right
    assert hub[5] == "- [crème](<Archive/Café v2.md#brewing-notes>) anchor as slug"
    assert hub[6] == "- [encoded](Archive/Caf%C3%A9%20v2.md) percent-encoded"
    assert hub[7] == "- [[Archive/Café v2|path label]] by path"
    reader = edited[READER][0].split("\n")
    assert reader[2] == "See [[Café Crème#Milk]] and [up](../../Archive/Caf%C3%A9%20v2.md#milk)."


def test_moving_a_folder_rewrites_the_links_into_it_and_out_of_it(session: LspSession, root: Path) -> None:
    edited = _edited(session, root, _will_rename(session, root, "deep", "deeper/still"))
    reader = edited[READER][0].split("\n")
    assert reader[2] == "See [[Café Crème#Milk]] and [up](../../../Projets/Caf%C3%A9%20Cr%C3%A8me.md#milk)."
    assert set(edited) == {READER}


def test_moving_a_note_titled_by_its_file_name_rewrites_the_links_by_that_name(session: LspSession, root: Path) -> None:
    edited = _edited(session, root, _will_rename(session, root, PLAIN, "plain text.md"))
    assert edited[HUB][0].split("\n")[9] == "- [[plain text]] has no title of its own"


def test_a_move_that_changes_no_link_edits_nothing(session: LspSession, root: Path) -> None:
    assert _will_rename(session, root, NOTES_B, "b/Other notes.md") is None
