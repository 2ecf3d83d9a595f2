"""PDFs, a saved web page and an org note over the real `kbls serve`, in a vault whose folders
have a space and an accent: `kb/search` finds page 2 of a PDF and names it, `kb/status` lists
the scanned PDF with its reason, `kb/related` and hover answer for a PDF hit's note and line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.corpus import write, write_config
from tests.support.documents import CHROME_WORDS, pdf_bytes, saved_page
from tests.support.lsp_client import LspSession, ready_session

VAULT = "Mes notes/Bibliothèque d'été"
PDF, SCAN, PAGE, ORG = "manuel pompe.pdf", "scans/reçu.pdf", "pages/pain maison.html", "jardin.org"
MAINTENANCE = (
    "Maintenance\nOnce a year replace the zorblatt gasket of the intake valve and check that the float "
    "switch moves freely; a stuck float runs the pump dry and burns out its seals within hours."
)
ARTICLE = (
    "A sourdough starter is fed twice a day with equal weights of rye flour and water until it doubles "
    "within six hours.\n\nShape the dough, rest it overnight in the fridge and bake it in a cast iron pot."
)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("formats") / VAULT
    root.mkdir(parents=True)
    write_config(root, extra='include: ["**/*.md", "**/*.org", "**/*.pdf", "**/*.html"]\n')
    write(root, "index.md", "# Index\n\nThe house and the garden.\n")
    write(root, ORG, "#+TITLE: Le jardin\n* Tomates\nWater the tomatoes at the base with the quintral hose.\n")
    (root / PDF).write_bytes(pdf_bytes(["Installation\nInstall the pump on a level floor.", MAINTENANCE]))
    (root / SCAN).parent.mkdir()
    (root / SCAN).write_bytes(pdf_bytes([None]))
    (root / PAGE).parent.mkdir()
    (root / PAGE).write_text(saved_page("Pain maison", ARTICLE), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def session(vault: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    yield from ready_session([vault], tmp_path_factory.mktemp("formats-logs"))


def test_search_finds_page_two_of_a_pdf_and_names_it(session: LspSession, vault: Path) -> None:
    hits = session.search("zorblatt gasket").hits
    assert hits[0].path == PDF and hits[0].breadcrumb.endswith("Page 2") and "zorblatt" in hits[0].snippet
    assert hits[0].uri == (vault / PDF).as_uri()


def test_a_scanned_pdf_is_listed_with_its_reason_and_the_others_are_indexed(session: LspSession) -> None:
    (root,) = session.status().roots
    errors = {e.path: e.reason for e in root.errors}
    assert errors[SCAN].startswith("no text layer") and PDF not in errors and PAGE not in errors
    assert root.files == 4  # index.md, the org note, the PDF, the page


def test_a_page_and_an_org_note_are_found_by_their_text_not_their_chrome(session: LspSession) -> None:
    assert session.paths_found("rye flour sourdough", mode="lexical") == [PAGE]
    assert session.paths_found("quintral", mode="lexical") == [ORG]
    for word in CHROME_WORDS:
        assert session.paths_found(word, mode="lexical") == []


def test_related_and_hover_answer_for_a_pdf_hit(session: LspSession, vault: Path) -> None:
    hit = session.search("zorblatt gasket").hits[0]
    position = {"line": hit.range.start.line, "character": 0}
    related = session.request("kb/related", {"uri": hit.uri, "position": position})
    assert PDF not in [h["path"] for h in related["hits"]]  # never itself, and no error
    session.hover(hit.uri, hit.range.start.line)  # a PDF is not open as text: answered, not raised
