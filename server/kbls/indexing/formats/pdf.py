"""A PDF's text layer, one section per page (`Page 2`), so that a hit names its page.

The text a reader is shown (MCP `read_note`) is each page's extracted text under a `Page N`
line; the sections' line numbers count that text's lines. A PDF with no text on any page (a
scan) cannot be indexed: `DocumentError` says so, and the file is listed as skipped.
pypdf is imported here only, on the first PDF: start-up does not pay for it.
"""

from __future__ import annotations

import io
import logging

from kbls.indexing.formats.errors import DocumentError
from kbls.indexing.markdown import line_runs
from kbls.indexing.parse import Block, ParsedNote, Section
from kbls.notepath import note_stem

#: pages read of one PDF; the rest are left out with a warning (time: pypdf read 24 pages of
#: 45 lines a second here, on two loaded cores).
MAX_PDF_PAGES = 2_000
#: characters kept of one page's text: a page of tables dumped as text stays bounded.
MAX_PAGE_CHARS = 100_000


def page_heading(number: int) -> str:
    return f"Page {number}"


def _pages(data: bytes) -> tuple[list[str], int, str | None]:
    """(texts of the pages read, pages in the file, PDF title metadata)."""
    from pypdf import PdfReader  # lazily: a dependency only PDFs need

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # it warns of every odd object to the log
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentError("encrypted PDF (it needs a password); kbls cannot read its text")
        total = len(reader.pages)
        texts = [(page.extract_text() or "")[:MAX_PAGE_CHARS] for page in reader.pages[:MAX_PDF_PAGES]]
        info = reader.metadata
        title = info.title if info is not None else None
    except DocumentError:
        raise
    except Exception as exc:  # pypdf raises many kinds on a damaged file; one file, never the run
        raise DocumentError(f"damaged or unsupported PDF ({type(exc).__name__}: {exc})") from None
    return texts, total, title if isinstance(title, str) else None


def read_pdf(rel_path: str, data: bytes) -> tuple[str, ParsedNote]:
    """(text shown to readers, parsed note) of the PDF `data`.

    :raises DocumentError: for a PDF without any text (a scan), an encrypted or damaged one.
    """
    texts, total, meta_title = _pages(data)
    if not any(t.strip() for t in texts):
        raise DocumentError(
            f"no text layer: none of its {total} pages has text (a scanned PDF?); "
            "run OCR on it (e.g. ocrmypdf) to index it"
        )
    stem = note_stem(rel_path)
    title = (meta_title or "").strip()[:300] or stem
    note = ParsedNote(title=title, kind="pdf", title_from_name=title == stem, merge_sections=False)
    lines: list[str] = []
    empty = 0
    for number, text in enumerate(texts, 1):
        clean = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n").strip("\n")
        body = [line.rstrip() for line in clean.split("\n")]
        if not any(body):
            empty += 1
            continue
        heading = page_heading(number)
        at = len(lines)
        lines.extend([heading, *body, ""])
        section = Section(headings=[heading], blocks=[Block(at, at, heading, is_heading=True)])
        for run in line_runs(at + 1, len(lines), lambda n: bool(lines[n].strip())):
            section.blocks.append(Block(run.start, run.end, "\n".join(lines[run.start : run.end + 1])))
        note.sections.append(section)
    warnings = []
    if empty:
        warnings.append(f"{empty} of {len(texts)} pages have no text (scanned?); they are not searchable")
    if total > len(texts):
        warnings.append(f"more than {MAX_PDF_PAGES:,} pages: pages {MAX_PDF_PAGES + 1:,}-{total:,} are not indexed")
    note.warning = "; ".join(warnings) or None
    return "\n".join(lines), note
