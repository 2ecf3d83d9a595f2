"""Open documents split into lines as LSP counts them, in place of pygls's `str.splitlines`.

LSP positions count lines ended by `\n`, `\r\n` or `\r` only (the spec, and every editor). pygls
2.x splits a document with `str.splitlines`, which also ends a line at a form feed (`\x0c`),
`\x0b`, `\x1c`-`\x1e`, `\x85`, `\u2028` and `\u2029`: in a note holding one of those (a page
break in a text file, a line separator pasted from a web page) every incremental edit after it
landed on the wrong line, and completion, definition and documentLink read the wrong line.
The fix is general; its upstream home is `pygls/workspace/text_document.py` (`TextDocument.lines`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pygls.workspace import TextDocument, Workspace

from kbls.lsp.pygls_compat import DocumentFactory

#: one line with its end, as LSP counts them; the last line may have no end.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


#: what `str.splitlines` ends a line at beyond `\n`, `\r\n` and `\r`.
_OTHER_ENDS = re.compile("[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def lsp_lines(text: str) -> tuple[str, ...]:
    """`text` cut into lines that keep their ends, at `\\n`, `\\r\\n` and `\\r` only."""
    # an ASCII text can hold five of those ends only, each found by a fast scan (the class search is slower)
    ascii_clean = text.isascii() and not any(end in text for end in "\x0b\x0c\x1c\x1d\x1e")
    if ascii_clean or (not text.isascii() and _OTHER_ENDS.search(text) is None):
        return tuple(text.splitlines(True))  # the same lines, several times faster
    return tuple(_LINE.findall(text))


class LspLinesDocument(TextDocument):
    """A pygls document whose `lines` (which every position conversion and incremental edit of
    pygls reads) follow LSP's line ends, split once per text (a request reads them several times;
    pygls gives each change a new `source` string)."""

    _split: tuple[str, tuple[str, ...]] | None = None

    @property
    def lines(self) -> Sequence[str]:
        source = self.source
        split = self._split
        if split is None or split[0] is not source:
            split = self._split = (source, lsp_lines(source))
        return split[1]


class LspLinesWorkspace(DocumentFactory):
    """A pygls workspace that makes `LspLinesDocument`s."""

    def make(
        self, uri: str, source: str | None, version: int | None, language_id: str | None, sync_kind: Any, codec: Any
    ) -> TextDocument:
        return LspLinesDocument(
            uri, source=source, version=version, language_id=language_id, sync_kind=sync_kind, position_codec=codec
        )


def adopt(workspace: Workspace) -> None:
    """Make the workspace pygls built in its `initialize` (before kbls's handler runs, and before
    any document is open) one that makes `LspLinesDocument`s. It adds no state, so the object can
    change class in place."""
    workspace.__class__ = LspLinesWorkspace
