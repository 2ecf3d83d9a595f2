"""Fixture files of the kinds that are not markdown, built in the test: PDFs written with pypdf
itself (a text layer per page in Helvetica, or none: a scan's pages) and saved web pages with
the navigation, banners and footer real pages carry around their article."""

from __future__ import annotations

import io

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def pdf_bytes(pages: list[str | None], title: str | None = None) -> bytes:
    """A PDF of one page per item: its lines as text, or no text at all for None (a scanned
    page: what OCR never reached)."""
    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject({
            NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        })
    )
    for text in pages:
        page = writer.add_blank_page(612, 792)
        if text is None:
            continue
        ops = ["BT", "/F1 11 Tf", "72 720 Td", "14 TL"]
        for line in text.split("\n"):
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
    if title is not None:
        writer.add_metadata({"/Title": title})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


#: words only the page's chrome holds (menu, banner, footer), never its article.
CHROME_WORDS = ("Quuxnavigation", "Cookiebannerword", "Footerglimmer")


def saved_page(title: str, article: str, og_title: str | None = None) -> str:
    """A saved web page: <title>, navigation, a cookie banner, the article, related links, a footer."""
    og = f'<meta property="og:title" content="{og_title}">' if og_title else ""
    paragraphs = "\n".join(f"<p>{p}</p>" for p in article.split("\n\n"))
    nav = " ".join(f'<li><a href="/{i}">{CHROME_WORDS[0]} {i}</a></li>' for i in range(8))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>{og}
<style>body {{ font-family: serif }}</style><script>var tracker = "{CHROME_WORDS[0]}";</script></head>
<body>
<header><nav><ul>{nav}</ul></nav></header>
<div class="cookie-banner">We use cookies. {CHROME_WORDS[1]} accept all.</div>
<main><article>
<h1>{og_title or title}</h1>
{paragraphs}
</article></main>
<aside><h3>Related</h3><ul><li><a href="/x">{CHROME_WORDS[0]} more</a></li></ul></aside>
<footer><p>Copyright 2026 {CHROME_WORDS[2]} Ltd. All rights reserved. {CHROME_WORDS[2]} privacy.</p></footer>
</body></html>
"""
