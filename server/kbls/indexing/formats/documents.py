"""One entry from a file's bytes to its note: text files (markdown, org, reST, plain) decoded
and parsed, PDFs and saved web pages through their extractors. The indexer and the readers
(MCP `read_note`) both come here, so what a hit's lines count is what a reader is shown.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from kbls.hashing import content_hash
from kbls.indexing.formats.errors import DocumentError
from kbls.indexing.parse import ParsedNote, parse_note
from kbls.indexing.text import decode_text

#: file name endings of the kinds that are not text, and their kind.
DOCUMENT_KINDS = {".pdf": "pdf", ".html": "html", ".htm": "html"}

BINARY = "binary file (contains NUL bytes)"


@dataclass(frozen=True)
class Document:
    #: the text a reader is shown; the note's line numbers count its lines
    text: str
    note: ParsedNote


def document_kind(rel_path: str) -> str | None:
    """"pdf" or "html" for the kinds read through an extractor; None for a text file."""
    lower = rel_path.lower()
    return next((kind for end, kind in DOCUMENT_KINDS.items() if lower.endswith(end)), None)


def read_document(rel_path: str, data: bytes) -> Document:
    """The note in `data`, the bytes of the file at `rel_path`; warnings in `note.warning`.

    :raises DocumentError: with the reason the file gives nothing to index (binary, a scanned
        PDF, a page without main text).
    """
    kind = document_kind(rel_path)
    if kind == "pdf":
        from kbls.indexing.formats.pdf import read_pdf

        return Document(*read_pdf(rel_path, data))
    if kind == "html":
        from kbls.indexing.formats.html import read_html

        return Document(*read_html(rel_path, data))
    decoded = decode_text(data)  # UTF-8, or UTF-16/32 with a BOM
    if decoded is None:
        raise DocumentError(BINARY)
    note = parse_note(rel_path, decoded.text)
    note.warning = "; ".join(w for w in (decoded.warning, note.warning) if w) or None
    return Document(decoded.text, note)


class _ExtractedTexts:
    """The extracted texts of the last few PDFs and pages read, by content hash: an agent reads
    a long PDF a range at a time, and pypdf takes seconds for a few hundred pages."""

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def text(self, rel_path: str, data: bytes) -> str:
        key = f"{document_kind(rel_path)}:{content_hash(data)}"
        with self._lock:
            if key in self._texts:
                self._texts.move_to_end(key)
                return self._texts[key]
        text = read_document(rel_path, data).text
        with self._lock:
            self._texts[key] = text
            while len(self._texts) > self.kept:
                self._texts.popitem(last=False)
        return text


_EXTRACTED = _ExtractedTexts(kept=8)


def document_text(rel_path: str, data: bytes) -> str:
    """The text a reader is shown of the file at `rel_path` (a text file is only decoded).

    :raises DocumentError: as `read_document`.
    """
    if document_kind(rel_path) is not None:
        return _EXTRACTED.text(rel_path, data)
    decoded = decode_text(data)
    if decoded is None:
        raise DocumentError(BINARY)
    return decoded.text
