"""Tag completion over LSP with the real `kbls serve`: after `#` in a note's text and inside the
front matter's `tags:`, the workspace's tags (front matter and inline, nested `#parent/child`),
most used first with their counts; nothing in code or at a heading's `#`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types
from tests.support.corpus import write_config
from tests.support.lsp_client import LspSession
from tests.support.notes_vault import write_vault


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_vault(tmp_path_factory.mktemp("tags") / "my vault")
    write_config(root)
    return root


@pytest.fixture(scope="module")
def session(vault: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    with LspSession([vault], tmp_path_factory.mktemp("tags-logs")) as s:
        s.wait_ready()
        yield s


def _offered(found: types.CompletionList | None) -> list[tuple[str, str | None]]:
    assert found is not None and found.is_incomplete
    return [(item.label, item.detail) for item in found.items]


def test_hash_is_a_trigger_character(session: LspSession) -> None:
    provider = session.initialize_result.capabilities.completion_provider
    assert provider is not None and "#" in (provider.trigger_characters or [])


def test_after_a_hash_every_tag_comes_most_used_first_with_its_count(session: LspSession, vault: Path) -> None:
    uri = session.open_document(vault / "journal" / "draft é.md", "# Draft\n\nToday I baked #")
    found = _offered(session.complete(uri, 2, len("Today I baked #")))
    # baking: two recipes' front matter and the journal's inline #baking
    assert found[0] == ("baking", "3 notes")
    assert set(found) == {
        ("baking", "3 notes"), ("bread", "1 note"), ("breakfast", "1 note"), ("people", "1 note"),
        ("math/history", "1 note"),
    }


def test_what_is_typed_narrows_the_tags_and_the_edit_replaces_it(session: LspSession, vault: Path) -> None:
    uri = session.open_document(vault / "journal" / "draft é.md", "# Draft\n\nSee #bre and more", version=2)
    found = session.complete(uri, 2, len("See #bre"))
    assert _offered(found) == [("bread", "1 note"), ("breakfast", "1 note")]
    assert found is not None
    edit = found.items[0].text_edit
    assert isinstance(edit, types.TextEdit) and edit.new_text == "bread"
    assert (edit.range.start.character, edit.range.end.character) == (len("See #"), len("See #bre"))


def test_a_nested_tag_completes_under_its_parent(session: LspSession, vault: Path) -> None:
    uri = session.open_document(vault / "journal" / "draft é.md", "# Draft\n\n#math/", version=3)
    assert _offered(session.complete(uri, 2, len("#math/"))) == [("math/history", "1 note")]


@pytest.mark.parametrize("line", ["tags: [bread, ba", "tags: bread, ba"])
def test_front_matter_tags_complete_on_the_tags_line(session: LspSession, vault: Path, line: str) -> None:
    uri = session.open_document(vault / "journal" / "fm.md", f"---\n{line}\n---\n# Fm\n")
    assert _offered(session.complete(uri, 1, len(line))) == [("baking", "3 notes")]


def test_front_matter_tags_complete_in_a_list_under_tags(session: LspSession, vault: Path) -> None:
    uri = session.open_document(vault / "journal" / "fm list.md", "---\ntags:\n  - peo\n---\n# Fm\n")
    assert _offered(session.complete(uri, 2, len("  - peo"))) == [("people", "1 note")]


@pytest.mark.parametrize("text", ["#", "```\n#", "some `#"])
def test_no_tags_at_a_heading_or_in_code(session: LspSession, vault: Path, text: str) -> None:
    uri = session.open_document(vault / "journal" / "code.md", text)
    lines = text.split("\n")
    assert session.complete(uri, len(lines) - 1, len(lines[-1])) is None
