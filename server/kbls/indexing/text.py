"""Bytes of a note file to text: UTF-8 (with or without BOM), or UTF-16/UTF-32 with a BOM.

One function for every reader (the indexer, MCP's read_note), so a note that can be found can
also be read. Newlines are normalised to `\\n`: line numbers are counted on that text.
`read_regular` is the one way every reader opens a note's file (the indexer, links, MCP).
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from pathlib import Path

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


def read_regular(path: Path, at_most: int) -> bytes | None:
    """Up to `at_most` bytes of `path`; None when it is not a regular file. Opened without
    blocking and checked on the open file: a note swapped for a FIFO after a caller's stat or
    `is_file` would have blocked the reader forever on `open`.

    :raises OSError: when the file cannot be opened or read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return handle.read(at_most)
