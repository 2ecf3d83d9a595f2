"""A saved web page's main content (trafilatura): the article as markdown, without navigation,
menus, footers, cookie banners or comments; titled from the page (og:title, else <title>).

The text a reader is shown is that markdown under a front matter holding the title, parsed as a
markdown note, so the article's headings become sections with breadcrumbs. trafilatura is
imported here only, on the first page: start-up does not pay for it.
"""

from __future__ import annotations

import logging

import yaml

from kbls.indexing.formats.errors import DocumentError
from kbls.indexing.parse import ParsedNote, parse_note
from kbls.storage.records import NoteSpans


def _extract(data: bytes) -> tuple[str | None, str | None]:
    """(article as markdown, page title) of an HTML page's bytes (its encoding detected)."""
    import trafilatura  # lazily: a dependency only web pages need

    logging.getLogger("trafilatura").setLevel(logging.ERROR)
    try:
        text = trafilatura.extract(
            data, output_format="markdown", include_comments=False, include_links=False,
            include_images=False, include_tables=True, with_metadata=False,
        )
        meta = trafilatura.extract_metadata(data)
    except Exception as exc:  # a parser failure costs this page, never the run
        raise DocumentError(f"cannot extract this web page's text ({type(exc).__name__}: {exc})") from None
    title = meta.title if meta is not None else None
    return text, title if isinstance(title, str) else None


def read_html(rel_path: str, data: bytes) -> tuple[str, ParsedNote]:
    """(text shown to readers, parsed note) of the saved page `data`.

    :raises DocumentError: when the page has no main text (an empty page, a frame set, a page
        its scripts would draw).
    """
    article, title = _extract(data)
    if not article or not article.strip():
        raise DocumentError("no main text found in this web page (empty, or drawn by scripts)")
    head = ""
    if title and title.strip():
        head = "---\n" + yaml.safe_dump({"title": title.strip()[:300]}, allow_unicode=True, width=1_000_000) + "---\n\n"
    text = head + article.strip() + "\n"
    note = parse_note(rel_path, text, kind="md")
    # Links and their positions are the markdown file's; a page's text is not one to edit.
    note.kind, note.links, note.spans = "html", [], NoteSpans()
    return text, note
