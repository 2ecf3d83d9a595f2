"""Every feature that takes a document's URI, over the real `kbls serve`, for notes whose paths
need escaping: a vault in `My Notes/Notizen Über` holding names with a space, `é` composed and
decomposed, `#`, `%`, `[`, `+` and `;`, each opened as VS Code writes its URI (everything
escaped) and as Neovim does (`+`, `;`, `=` left as they are).

pygls keeps an open document under its decoded URI (kbls.lsp.uris): completion, definition and
documentLink used to look it up by the URI as sent and answered nothing in such a vault.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lsprotocol import types
from tests.support.client_uris import neovim_uri, vscode_uri
from tests.support.corpus import write_config
from tests.support.link_corpus import SLEEPLESS, write_link_workspace
from tests.support.lsp_client import LspSession, ready_session

VAULT = "My Notes/Notizen \u00dcber"
NAMES = [
    "space name.md", "Caf\u00e9 composed/note.md", "Cafe\u0301 decomposed/note.md", "issue #12.md", "100% done.md",
    "[draft] plan.md", "c++ tips.md", "a;b=c.md",
]
#: every note as saved, the same text: the index knows it (hover and kb/related read the index),
#: and each note's nearest notes are the others, whose URIs the answers must write right.
KNITTING = (
    "Cast on forty stitches of the wool yarn, knit two rows in rib, then switch to the larger needles "
    "and purl every other row until the scarf is as long as the knitter is tall."
)
SAVED = f"# Knitting draft\n\n{KNITTING}\n"
#: the note as the editor holds it: a `[[` being typed (line 2), two links (line 3).
TYPED = f"# Knitting draft\n\n{SLEEPLESS}[[\nSee [[Sleep hygiene]] and [[Growing tomatoes]].\n"
COMPLETE_AT = (2, len(SLEEPLESS) + 2)


FORMS: dict[str, Callable[[Path], str]] = {"vscode": vscode_uri, "neovim": neovim_uri}
CASES = [pytest.param(name, form, id=f"{form}-{name}") for name in NAMES for form in FORMS]


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_link_workspace(tmp_path_factory.mktemp("odd") / VAULT, "title")
    write_config(root)
    for name in NAMES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(SAVED, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def session(vault: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    yield from ready_session([vault], tmp_path_factory.mktemp("odd-logs"))


def _opened(session: LspSession, vault: Path, name: str, form: str) -> str:
    uri = FORMS[form](vault / name)
    assert "%" in uri
    return session.open_document(vault / name, TYPED, uri=uri)


@pytest.mark.parametrize(("name", "form"), CASES)
def test_completion_after_brackets(session: LspSession, vault: Path, name: str, form: str) -> None:
    found = session.complete(_opened(session, vault, name, form), *COMPLETE_AT)
    assert found is not None and found.items, session.log_tail(5)
    assert found.items[0].label == "Sleep hygiene"


@pytest.mark.parametrize(("name", "form"), CASES)
def test_definition_names_a_uri_the_client_opens(session: LspSession, vault: Path, name: str, form: str) -> None:
    uri = _opened(session, vault, name, form)
    assert [loc.uri for loc in session.definition(uri, 3, 8)] == [(vault / "health/sleep.md").as_uri()]


@pytest.mark.parametrize(("name", "form"), CASES)
def test_document_links(session: LspSession, vault: Path, name: str, form: str) -> None:
    links = session.document_links(_opened(session, vault, name, form))
    assert sorted((link.range.start.character, link.target) for link in links) == [
        (4, (vault / "health/sleep.md").as_uri()), (26, (vault / "garden/tomatoes.md").as_uri()),
    ]


@pytest.mark.parametrize(("name", "form"), CASES)
def test_outline_and_folding(session: LspSession, vault: Path, name: str, form: str) -> None:
    uri = _opened(session, vault, name, form)
    document = {"textDocument": {"uri": uri}}
    symbols = session.raw_request("textDocument/documentSymbol", document)
    assert [symbol["name"] for symbol in symbols or []] == ["Knitting draft"]
    assert session.raw_request("textDocument/foldingRange", document)


def _names_the_other_notes(uris: list[str], vault: Path, name: str) -> None:
    """URIs of the other saved notes, each as the client writes it (so that it opens that file)."""
    others = {(vault / other).as_uri() for other in NAMES if other != name}
    assert uris and set(uris) <= others, uris


@pytest.mark.parametrize(("name", "form"), CASES)
def test_hover_on_the_heading_links_the_related_notes(session: LspSession, vault: Path, name: str, form: str) -> None:
    hover = session.hover(_opened(session, vault, name, form), 0)
    assert hover is not None and isinstance(hover.contents, types.MarkupContent), session.log_tail(5)
    _names_the_other_notes(re.findall(r"\]\((file://[^)]+)#L\d+\)", hover.contents.value), vault, name)


@pytest.mark.parametrize(("name", "form"), CASES)
def test_related_for_the_note_and_for_the_cursors_section(
    session: LspSession, vault: Path, name: str, form: str
) -> None:
    """kb/related as the picker asks it (the whole note) and as the panel does (the cursor's line)."""
    uri = _opened(session, vault, name, form)
    for position in (None, {"line": 2, "character": 0}):
        params = {"uri": uri, "limit": 5} | ({"position": position} if position else {})
        hits = session.request("kb/related", params)["hits"]
        _names_the_other_notes([hit["uri"] for hit in hits], vault, name)


def test_a_document_the_server_does_not_hold_is_named_in_the_log(session: LspSession, vault: Path) -> None:
    never_opened = (vault / "space name.md").as_uri().replace(".md", "-unopened.md")
    assert session.complete(never_opened, 0, 0) is None
    assert session.definition(never_opened, 0, 0) == []
    session.wait_for(
        lambda: session.log_file.read_text(errors="replace").count(f"no open document for {never_opened}") >= 2,
        timeout=10, what="the log to name the document",
    )
