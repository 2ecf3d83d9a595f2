"""Org-mode, PDF and saved web pages read into notes (kbls.indexing.formats), without a store:
what becomes a section, a title, a tag, and what is left out."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tests.support.documents import CHROME_WORDS, pdf_bytes, saved_page

from kbls.indexing.formats.documents import document_text, read_document
from kbls.indexing.formats.errors import DocumentError
from kbls.indexing.formats.pdf import MAX_PAGE_CHARS
from kbls.indexing.parse import parse_note

ORG = """\
#+TITLE: Garden journal
#+FILETAGS: :garden:outdoors:
#+STARTUP: overview

Notes on the allotment.

* TODO [#A] Tomatoes                                             :summer:
:PROPERTIES:
:ID: 1234-secret-property
:END:
Pinch out the side shoots every week.

** Watering
Water at the base in the morning.

#+BEGIN_SRC shell
# not a comment heading
* not a heading either
#+END_SRC

* Winter
# a comment line the reader never sees
Mulch the beds with compost.
"""


def test_org_headings_are_sections_with_breadcrumbs_title_and_tags_from_keywords() -> None:
    note = parse_note("journal/garden.org", ORG)
    assert note.kind == "org" and note.title == "Garden journal" and not note.title_from_name
    assert note.tags == ["garden", "outdoors", "summer"]
    assert [s.headings for s in note.sections] == [[], ["Tomatoes"], ["Tomatoes", "Watering"], ["Winter"]]
    text = "\n".join(b.text for s in note.sections for b in s.blocks)
    assert "1234-secret-property" not in text and "#+STARTUP" not in text and "comment line" not in text
    watering = note.sections[2]
    # the source block is one block, its `*` line not a heading
    assert any(b.text.startswith("#+BEGIN_SRC") and "* not a heading" in b.text for b in watering.blocks)
    assert note.sections[1].blocks[0].start_line == ORG.split("\n").index(
        next(line for line in ORG.split("\n") if line.startswith("* TODO"))
    )


def test_org_without_a_title_keyword_is_named_by_its_file_not_its_first_heading() -> None:
    note = parse_note("Été/idées.org", "* First\nbody\n* Second\nmore\n")
    assert note.title == "idées" and note.title_from_name
    assert [s.headings for s in note.sections] == [["First"], ["Second"]]


def test_pdf_pages_become_sections_named_by_their_page() -> None:
    data = pdf_bytes(["Alpha chapter one\nsecond line", "The zorblatt valve on page two"], title="Pump manual")
    document = read_document("manuals/pump.pdf", data)
    note = document.note
    assert note.kind == "pdf" and note.title == "Pump manual" and note.warning is None
    assert [s.headings for s in note.sections] == [["Page 1"], ["Page 2"]]
    lines = document.text.split("\n")
    page_two = note.sections[1].blocks[1]
    assert "zorblatt" in page_two.text and "zorblatt" in lines[page_two.start_line]
    assert lines[note.sections[1].blocks[0].start_line] == "Page 2"
    assert document_text("manuals/pump.pdf", data) == document.text


def test_a_pdf_without_a_text_layer_is_refused_with_the_reason() -> None:
    with pytest.raises(DocumentError, match="no text layer: none of its 2 pages has text"):
        read_document("scans/receipt.pdf", pdf_bytes([None, None]))


def test_a_partly_scanned_pdf_is_indexed_with_a_warning_naming_its_empty_pages() -> None:
    note = read_document("mixed.pdf", pdf_bytes(["typed page", None, None])).note
    assert [s.headings for s in note.sections] == [["Page 1"]]
    assert note.warning == "2 of 3 pages have no text (scanned?); they are not searchable"
    assert note.title == "mixed" and note.title_from_name


def test_a_damaged_pdf_is_refused_not_raised() -> None:
    with pytest.raises(DocumentError, match="damaged or unsupported PDF"):
        read_document("broken.pdf", b"%PDF-1.7\nthis is not a pdf body at all\n")


def test_a_long_pdf_page_is_cut_at_its_cap() -> None:
    long_line = "word " * 30
    note = read_document("long.pdf", pdf_bytes(["\n".join([long_line] * 1000)])).note
    assert sum(len(b.text) for b in note.sections[0].blocks) <= MAX_PAGE_CHARS + 2000


ARTICLE = (
    "Sourdough needs a lively starter fed twice a day with equal weights of flour and water.\n\n"
    "The dough rests overnight in the fridge, which slows the yeast and deepens the flavour of the "
    "crumb; bake it the next morning in a preheated Dutch oven for forty minutes."
)


def test_a_saved_page_keeps_its_article_and_drops_navigation_banner_and_footer() -> None:
    html = saved_page("Bread at home - Example Site", ARTICLE, og_title="Bread at home")
    document = read_document("saved/bread.html", html.encode())
    assert document.note.kind == "html" and document.note.title == "Bread at home"
    assert "lively starter" in document.text and "Dutch oven" in document.text
    for word in CHROME_WORDS:
        assert word not in document.text
    assert document.note.links == []


def test_a_page_title_comes_from_its_title_element_without_og_title() -> None:
    note = read_document("saved/b.htm", saved_page("Proofing baskets", ARTICLE).encode()).note
    assert note.title == "Proofing baskets"


def test_a_page_without_main_text_is_refused_with_the_reason() -> None:
    empty = b"<html><head><title>App</title><script>render()</script></head><body><div id=app></div></body></html>"
    with pytest.raises(DocumentError, match="no main text"):
        read_document("saved/app.html", empty)


def test_start_up_does_not_import_the_pdf_or_web_page_libraries() -> None:
    """pypdf and trafilatura (with lxml) load on the first PDF or page, not with the indexer."""
    code = (
        "import sys, kbls.cli, kbls.engine, kbls.indexing.pipeline, kbls.mcp.local\n"
        "print(sorted(m for m in ('pypdf', 'trafilatura', 'lxml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_an_org_roam_note_with_a_leading_property_drawer_and_lowercase_keywords() -> None:
    text = (
        ":PROPERTIES:\n:ID:       8f1c-roam-id\n:END:\n"
        "#+title: Zettel on compost\n#+filetags: :soil:\n\nBrown and green layers.\n"
    )
    note = parse_note("roam/20261201-compost.org", text)
    assert note.title == "Zettel on compost" and note.tags == ["soil"]
    assert [b.text for s in note.sections for b in s.blocks] == ["Brown and green layers."]


def test_reading_a_pdf_again_reuses_its_extracted_text_until_the_file_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """MCP read_note reads a long PDF a range at a time: extracting it once per call cost seconds."""
    from kbls.indexing.formats import pdf

    calls: list[str] = []
    real = pdf.read_pdf
    monkeypatch.setattr(pdf, "read_pdf", lambda rel, data: calls.append(rel) or real(rel, data))
    first, edited = pdf_bytes(["cached page one"]), pdf_bytes(["edited page one"])
    assert "cached page one" in document_text("cache/a.pdf", first)
    assert document_text("cache/a.pdf", first) == document_text("cache/a.pdf", first)
    assert "edited page one" in document_text("cache/a.pdf", edited)
    assert calls == ["cache/a.pdf", "cache/a.pdf"]
