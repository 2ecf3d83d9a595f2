"""The outline of an open note: `textDocument/documentSymbol` (headings nested by level, each
over its section; the front matter with its keys) and `textDocument/foldingRange` (sections,
code, front matter, lists, quotes, HTML comments), from `kbls.editing.outline`.

The symbols come from the version's view (`kbls.lsp.views`): its headings as the line scan every
link feature shares reads them, and the front matter, so `documentSymbol` waits for no parse.
The folds need the CommonMark block parse (markdown-it-py, ~25 µs a line), made once per version
on a thread of its own and kept with the view. A document the client has not opened gets no
answer (None).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from kbls.editing.outline import FoldKind, FrontMatter, Heading
from kbls.lsp.featurestate import state_of
from kbls.lsp.uris import open_text
from kbls.lsp.views import Views

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

FRONT_MATTER = "front matter"
_FOLD_KINDS = {
    FoldKind.SECTION: types.FoldingRangeKind.Region,
    FoldKind.FRONT_MATTER: types.FoldingRangeKind.Imports,
    FoldKind.COMMENT: types.FoldingRangeKind.Comment,
}


def register(server: KblsServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, types.DocumentSymbolOptions(label="kbls"))(document_symbol)
    server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)(folding_range)


def document_symbol(
    ls: KblsServer, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol] | list[types.SymbolInformation] | None:
    document = open_text(ls.workspace, params.text_document.uri, types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    if document is None:
        return None
    views = state_of(ls, Views)
    hierarchical = _hierarchical(ls)

    def answer(text: TextDocument) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
        parsed = views.symbols(text)
        lines = text.lines
        symbols = [_heading_symbol(text, lines, h) for h in parsed.headings]
        if parsed.front_matter is not None:
            symbols.insert(0, _front_matter_symbol(text, lines, parsed.front_matter))
        return symbols if hierarchical else _flat(text.uri, symbols)

    # an editor asks again on every focus and after each change: the version's answer is kept,
    # and made for each later version just before its diagnostics are sent (`Views.warm_answers`)
    found: list[types.DocumentSymbol] | list[types.SymbolInformation] = views.answer(document, "documentSymbol", answer)
    return found


async def folding_range(ls: KblsServer, params: types.FoldingRangeParams) -> list[types.FoldingRange] | None:
    document = open_text(ls.workspace, params.text_document.uri, types.TEXT_DOCUMENT_FOLDING_RANGE)
    if document is None:
        return None
    parsed = await asyncio.shield(state_of(ls, Views).outline(document))
    return [types.FoldingRange(fold.start, fold.end, kind=_FOLD_KINDS.get(fold.kind)) for fold in parsed.folds]


def _range(document: TextDocument, lines: Sequence[str], first: int, last: int) -> types.Range:
    """Lines `first`..`last` whole, in the client's units."""
    end = len(lines[last].rstrip("\r\n")) if last < len(lines) else 0
    if last < len(lines) and lines[last].isascii():  # a character is one unit in every encoding
        return types.Range(types.Position(first, 0), types.Position(last, end))
    span = ServerTextRange(ServerTextPosition(first, 0), ServerTextPosition(last, end))
    return document.position_codec.range_to_client_units(lines, span)


def _heading_symbol(document: TextDocument, lines: Sequence[str], heading: Heading) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=heading.text, detail="#" * heading.level, kind=types.SymbolKind.String,
        range=_range(document, lines, heading.line, heading.section_end),
        selection_range=_range(document, lines, heading.line, heading.line),
        children=[_heading_symbol(document, lines, child) for child in heading.children],
    )


def _front_matter_symbol(document: TextDocument, lines: Sequence[str], front: FrontMatter) -> types.DocumentSymbol:
    keys = [
        types.DocumentSymbol(
            name=key, kind=types.SymbolKind.Property, range=_range(document, lines, line, line),
            selection_range=_range(document, lines, line, line),
        )
        for key, line in front.keys
    ]
    return types.DocumentSymbol(
        name=FRONT_MATTER, kind=types.SymbolKind.Namespace, range=_range(document, lines, front.start, front.end),
        selection_range=_range(document, lines, front.start, front.start), children=keys,
    )


def _hierarchical(ls: KblsServer) -> bool:
    text = ls.client_capabilities.text_document
    symbols = text.document_symbol if text is not None else None
    return bool(symbols is not None and symbols.hierarchical_document_symbol_support)


def _flat(uri: str, symbols: list[types.DocumentSymbol], container: str | None = None) -> list[types.SymbolInformation]:
    """Symbols as a flat list (a client without hierarchical support), each naming its parent."""
    out: list[types.SymbolInformation] = []
    for symbol in symbols:
        out.append(types.SymbolInformation(
            name=symbol.name, kind=symbol.kind, location=types.Location(uri, symbol.range), container_name=container,
        ))
        out.extend(_flat(uri, list(symbol.children or []), symbol.name))
    return out
