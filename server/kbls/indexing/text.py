"""Bytes of a note file to text: UTF-8 (with or without BOM), or UTF-16/UTF-32 with a BOM.

One function for every reader (the indexer, MCP's read_note), so a note that can be found can
also be read. Newlines are normalised to `\\n`: line numbers are counted on that text.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

#: byte order marks, UTF-32 first: the UTF-32-LE mark begins with the UTF-16-LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


@dataclass(frozen=True)
class DecodedText:
    text: str
    #: set when undecodable bytes were replaced (the note is still indexed).
    warning: str | None = None


def decode_text(data: bytes) -> DecodedText | None:
    """The text of a file's bytes; None for a binary file (NUL bytes and no UTF-16/32 BOM)."""
    encoding = next((name for bom, name in _BOMS if data.startswith(bom)), None)
    if encoding is None:
        if b"\x00" in data:
            return None
        encoding = "utf-8-sig"
    warning = None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        text = data.decode(encoding, errors="replace")
        label = "UTF-8" if encoding == "utf-8-sig" else encoding.upper()
        warning = f"invalid {label} at byte {exc.start}; undecodable bytes were replaced"
    return DecodedText(text.replace("\r\n", "\n").replace("\r", "\n"), warning)
