"""What the note-graph features (references, backlinks, rename, code lens) take from the editor
and give back: the open documents' text and versions by path, the cursor in Python characters,
and stored spans as ranges in the client's position units (`Span.columns`: no note is read).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition, ServerTextRange

from kbls.links.view import NoteView
from kbls.lsp import uris
from kbls.lsp.views import view_of
from kbls.storage.records import Span

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer


def file_path(uri: str) -> Path | None:
    """The file a client's URI names; None for any scheme but `file` (`kbls.lsp.uris`)."""
    return uris.client_uri(uri).path


def note_uri(folder: Path, rel: str) -> str:
    """The URI of the note at `rel` in the root whose folder the client named `folder`."""
    return uris.file_uri(folder / rel)


def texts(ls: KblsServer) -> dict[Path, NoteView]:
    """Every open file document's view (`kbls.lsp.views`), by path (the URI it was opened by)."""
    out = {}
    for document in list(ls.workspace.text_documents.values()):
        path = file_path(document.uri)
        if path is not None:
            out[path] = view_of(ls, document)
    return out


def versions(ls: KblsServer) -> dict[Path, int | None]:
    """Every open file document's version, by path."""
    out = {}
    for document in list(ls.workspace.text_documents.values()):
        path = file_path(document.uri)
        if path is not None:
            out[path] = document.version
    return out


def encoding(ls: KblsServer) -> str:
    """The position encoding agreed with the client ("utf-16" unless it chose another)."""
    chosen = ls.workspace.position_encoding
    return str(chosen.value if isinstance(chosen, types.PositionEncodingKind) else chosen or "utf-16")


def cursor(ls: KblsServer, uri: str, position: types.Position, feature: str) -> tuple[Path, NoteView, int, int] | None:
    """(path, view, line, character in Python characters) of a position in an open document;
    None when the document is not open, not a file, or the position is past its last line."""
    opened = uris.open_document(ls.workspace, uri, feature)
    if opened is None:
        return None
    document, path = opened
    raw = list(document.lines)
    if position.line >= len(raw):
        if position.line == len(raw) and position.character == 0:
            return path, view_of(ls, document), position.line, 0
        return None
    at = document.position_codec.position_from_client_units(raw, position)
    return path, view_of(ls, document), at.line, at.character


def span_range(span: Span, units: str) -> types.Range:
    """A stored span as a range in the client's `units`."""
    start, end = span.columns(units)
    return types.Range(types.Position(span.line, start), types.Position(span.line, end))


def text_range(lines: list[str], line: int, start: int, end: int, units: str, end_line: int | None = None) -> types.Range:
    """Columns in Python characters of `lines` (the text an edit was computed on) in client units;
    the range ends on `end_line` (None: on `line`)."""
    last = line if end_line is None else end_line
    server = ServerTextRange(ServerTextPosition(line, start), ServerTextPosition(last, end))
    return PositionCodec(encoding=units).range_to_client_units(lines, server)
