"""PDFs, saved web pages and org notes through `kbls index`, `kbls search`, `kbls status` and
MCP `read_note`, with the real model and store, in folders named as users name them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.corpus import write
from tests.support.documents import CHROME_WORDS, pdf_bytes, saved_page

from kbls.cli import main
from kbls.config import Config
from kbls.editing.checks import report
from kbls.links.view import NoteView
from kbls.mcp.local import LocalBackend

FOLDER = "Bibliothèque partagée/Été 2026"
PDF = f"{FOLDER}/manuel de la pompe.pdf"
SCAN = f"{FOLDER}/reçu scanné.pdf"
PAGE = f"{FOLDER}/pain maison.html"
ORG = f"{FOLDER}/jardin.org"
ARTICLE = (
    "A sourdough starter is fed twice a day with equal weights of rye flour and water until it "
    "doubles within six hours.\n\n"
    "Shape the dough, let it rest overnight in the fridge and bake it in a preheated cast iron "
    "pot: the steam it keeps in gives the crust its blisters."
)
ORG_TEXT = (
    "#+TITLE: Le jardin\n* Tomates\nPlant the tomatoes in May once the nights stay above ten degrees, "
    "two feet apart along the south fence, and pinch out the side shoots every week so that the plant "
    "puts its strength into the trusses rather than into leaves.\n"
    "** Arrosage\nWater the tomatoes at the base with the quintral hose early in the morning, never "
    "on the leaves, and keep the soil evenly moist: irregular watering splits the fruit and brings "
    "blossom end rot in a hot July.\n"
)
INCLUDE = 'include: ["**/*.md", "**/*.org", "**/*.pdf", "**/*.html"]\n'


@pytest.fixture
def vault(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, embedder: Any) -> Any:
    monkeypatch.setattr("kbls.engine.Embedder", lambda config=None: embedder)
    root = tmp_path / "Mes notes"
    write(root, "index.md", "# Index\n\nThe notes of the house and the garden.\n")
    write(root, ORG, ORG_TEXT)
    (root / PDF).write_bytes(pdf_bytes(
        ["Pump manual\nInstall the pump on a level floor away from frost.",
         "Maintenance\nOnce a year replace the zorblatt gasket of the intake valve."],
        title="Pompe PX-20",
    ))
    (root / SCAN).write_bytes(pdf_bytes([None, None]))
    (root / PAGE).write_text(saved_page("Pain maison | Example Bakery", ARTICLE), encoding="utf-8")
    store = tmp_path / "store"

    def run(*args: str) -> tuple[int, str]:
        status = main([*args, "--root", str(root), "--store", str(store)])
        return status, capsys.readouterr().out

    run.root, run.store = root, store  # type: ignore[attr-defined]
    return run


def _search(vault: Any, query: str, *more: str) -> list[dict[str, Any]]:
    status, out = vault("search", query, "--json", *more)
    assert status == 0
    hits: list[dict[str, Any]] = json.loads(out)
    return hits


def test_pdf_and_html_are_off_by_default_and_org_is_on(vault: Any) -> None:
    status, out = vault("index", "--json")
    assert status == 0
    assert json.loads(out)["files"] == 2  # index.md and the org note; no PDF, no web page
    assert [h["path"] for h in _search(vault, "zorblatt", "--mode", "lexical")] == []
    assert [h["path"] for h in _search(vault, "quintral", "--mode", "lexical")] == [ORG]


def test_a_word_on_page_two_of_a_pdf_is_found_and_the_hit_names_page_two(vault: Any) -> None:
    (vault.root / ".kbls.yaml").write_text(INCLUDE, encoding="utf-8")
    status, out = vault("index", "--json")
    report = json.loads(out)
    assert status == 0 and report["files"] == 4
    assert {s["path"]: s["reason"] for s in report["skipped"]}[SCAN].startswith("no text layer")
    hits = _search(vault, "zorblatt gasket")
    assert hits[0]["path"] == PDF and hits[0]["title"] == "Pompe PX-20"
    assert "Page 2" in hits[0]["breadcrumb"] and "zorblatt" in hits[0]["snippet"]
    # the scanned PDF is a problem `kbls status` lists, with the reason
    status, out = vault("status", "--json")
    errors = {e["path"]: e["reason"] for e in json.loads(out)["errors"]}
    assert status == 0 and "no text layer" in errors[SCAN] and "OCR" in errors[SCAN]
    # MCP read_note gives the hit's lines (1-based there) as text: the page, not the PDF's bytes
    note = LocalBackend({vault.root: vault.store}).read_note(
        [vault.root], PDF, start_line=hits[0]["start_line"] + 1, end_line=hits[0]["end_line"] + 1
    )
    assert note.text.split("\n")[0] == "Page 2" and "zorblatt gasket" in note.text and "%PDF" not in note.text


def test_a_saved_page_is_found_by_its_article_never_by_its_navigation_or_footer(vault: Any) -> None:
    (vault.root / ".kbls.yaml").write_text(INCLUDE, encoding="utf-8")
    assert vault("index")[0] == 0
    hits = _search(vault, "sourdough starter rye flour", "--mode", "lexical")
    assert [h["path"] for h in hits] == [PAGE] and hits[0]["title"] == "Pain maison | Example Bakery"
    for word in CHROME_WORDS:
        assert _search(vault, word, "--mode", "lexical") == []


def test_org_headings_are_searchable_sections_with_their_breadcrumb(vault: Any) -> None:
    assert vault("index")[0] == 0
    hits = _search(vault, "water the tomatoes at the base")
    assert hits[0]["path"] == ORG and hits[0]["title"] == "Le jardin"
    assert hits[0]["breadcrumb"].endswith("Tomates > Arrosage")


def test_a_pdf_over_its_size_cap_is_skipped_naming_the_setting(vault: Any) -> None:
    (vault.root / ".kbls.yaml").write_text(INCLUDE + "max_pdf_bytes: 600\n", encoding="utf-8")
    status, out = vault("index", "--json")
    reasons = {s["path"]: s["reason"] for s in json.loads(out)["skipped"]}
    assert status == 0 and reasons[PDF].startswith("larger than max_pdf_bytes")
    assert [h["path"] for h in _search(vault, "sourdough", "--mode", "lexical")] == [PAGE]


def test_a_link_to_a_pdf_page_is_not_a_missing_heading(root: Path, make_engine: Any) -> None:
    """A PDF's bytes hold no headings: `[manual](manual.pdf#page=2)` is a link to a page, which
    the link check must not flag as a heading the file lacks."""
    (root / "manual.pdf").write_bytes(pdf_bytes(["one", "two"]))
    note = "# Pump\n\nSee [the manual](manual.pdf#page=2) and [the notes](other.md#nowhere).\n"
    write(root, "pump.md", note)
    write(root, "other.md", "# Other\n\ntext\n")
    engine = make_engine(root, config=Config(include=["**/*.md", "**/*.pdf"]))
    engine.index()
    problems = report(engine, "pump.md", NoteView(note.split("\n"))).problems
    assert [p.ref.target for p in problems] == ["other.md"]  # the check runs; the PDF page passes
