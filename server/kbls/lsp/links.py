"""Links in the editor: `textDocument/completion` after `[[` or `](`, `textDocument/definition`
and `textDocument/documentLink` on wiki and relative markdown links.

Thin handlers over `Daemon.link_suggestions` / `Daemon.resolve_links`: they read the open
document's text (kept by pygls from didOpen/didChange: `kbls.lsp.textsync`),
find the link at the cursor (`kbls.links.syntax`), make one daemon call and convert its
answer to LSP types. The open document is found by `kbls.lsp.uris.open_document` (pygls keys it
by the decoded URI). A document the client has not opened (said in the log), or one outside every
root, gets no answer (None), never an error: the editor asks for every markdown file it shows.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from kbls.editing.tagsyntax import tag_typing
from kbls.errors import OutsideRootError
from kbls.links.resolve import LinkTarget
from kbls.links.suggest import LinkQuery, LinkSuggestion, Resolved, Suggestions
from kbls.links.syntax import (
    LinkKind,
    LinkRef,
    LinkTyping,
    context_around,
    opening_at,
    typing_at,
)
from kbls.lsp import tags
from kbls.lsp.uris import file_uri, open_document
from kbls.lsp.views import view_of

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

log = logging.getLogger(__name__)

#: typing `[[` or `](` (or `#`, a tag: `kbls.lsp.tags`) asks for completion without a keystroke to invoke it.
TRIGGER_CHARACTERS = ["[", "(", "#"]
#: links of one document made clickable (a generated note of 100k links gets its first ones).
MAX_DOCUMENT_LINKS = 2_000


def register(server: KblsServer) -> None:
    """Add the link features to `server` (open documents' text is kept: `kbls.lsp.textsync`)."""
    server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS, resolve_provider=False),
    )(completion)
    server.feature(types.TEXT_DOCUMENT_DEFINITION)(definition)
    server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK, types.DocumentLinkOptions(resolve_provider=False))(document_link)


def _server_position(document: TextDocument, lines: list[str], position: types.Position) -> ServerTextPosition | None:
    """The position in Python characters; None past the last line (pygls would move it onto the
    last line, where a link might be found that the cursor is not in)."""
    if position.line >= len(lines):
        return None
    return document.position_codec.position_from_client_units(lines, position)


def _client_range(document: TextDocument, lines: list[str], line: int, start: int, end: int) -> types.Range:
    server_range = ServerTextRange(ServerTextPosition(line, start), ServerTextPosition(line, end))
    return document.position_codec.range_to_client_units(lines, server_range)


# -- completion ---------------------------------------------------------------------------------
async def completion(ls: KblsServer, params: types.CompletionParams) -> types.CompletionList | None:
    opened = open_document(ls.workspace, params.text_document.uri, types.TEXT_DOCUMENT_COMPLETION)
    if opened is None:
        return None
    document, path = opened
    lines = list(document.lines)
    at = _server_position(document, lines, params.position)
    if at is None:
        return None
    typing = typing_at(lines, at.line, at.character)
    text = [line.rstrip("\r\n") for line in lines]
    if typing is None:
        tag = tag_typing(text, at.line, at.character)
        if tag is not None:
            return await tags.complete(ls, document, lines, tag)
        _warm_up(ls, path, text, opening_at(text, at.line, at.character))
        return None
    query = LinkQuery(
        kind=typing.kind, typed=typing.typed, context=context_around(text, typing), document=text, angled=typing.angled
    )
    try:
        answer = await ls.call(ls.query_pool, ls.daemon.link_suggestions, path, query)
    except JsonRpcInvalidParams:
        return None  # a note outside the knowledge base
    return completion_list(answer, typing, document, lines)


def _warm_up(ls: KblsServer, path: Path, text: list[str], opening: LinkTyping | None) -> None:
    """After a lone `[`, find the paragraph's nearest notes in the background (no answer is
    sent): when the second `[` comes, its request finds them kept (`NoteLinks`) and skips the
    embedding, the slow part of the first `[[` of a paragraph."""
    if opening is None:
        return
    query = LinkQuery(kind=LinkKind.WIKI, typed="", context=context_around(text, opening), document=text)
    # Not awaited: its errors (a note outside the roots, a store being rebuilt) stay in the future.
    ls.query_pool.submit(ls.daemon.link_suggestions, path, query)


def completion_list(
    answer: Suggestions, typing: LinkTyping, document: TextDocument, lines: list[str]
) -> types.CompletionList:
    """Items in the server's order; incomplete, so the client asks again as one types."""
    edit_range = _client_range(document, lines, typing.line, typing.replace_start, typing.replace_end)
    items = [
        completion_item(s, rank, typing, edit_range, _label_edit(document, lines, typing, s))
        for rank, s in enumerate(answer.items)
    ]
    return types.CompletionList(is_incomplete=True, items=items)


def _label_edit(document: TextDocument, lines: list[str], typing: LinkTyping, s: LinkSuggestion) -> list[types.TextEdit]:
    if typing.empty_label_at is None or not s.label:
        return []
    where = _client_range(document, lines, typing.line, typing.empty_label_at, typing.empty_label_at)
    return [types.TextEdit(range=where, new_text=s.label.replace("[", "\\[").replace("]", "\\]"))]


def detail(s: LinkSuggestion) -> str:
    """Why the note is offered: the name that matched what was typed, its nearness in meaning."""
    why = []
    if s.matched:
        why.append(f"{s.matched} match")
    if s.meaning is not None:
        why.append(f"meaning {s.meaning:.2f}")
    return f"{' + '.join(why) or 'note'} · {s.path}"


def completion_item(
    s: LinkSuggestion, rank: int, typing: LinkTyping, edit_range: types.Range, extra: list[types.TextEdit]
) -> types.CompletionItem:
    docs = f"**{s.breadcrumb.replace('>', '›')}**\n\n{s.snippet}" if s.snippet else f"**{s.breadcrumb}**"
    return types.CompletionItem(
        label=s.title or s.path,
        kind=types.CompletionItemKind.File if typing.kind == LinkKind.PATH else types.CompletionItemKind.Reference,
        detail=detail(s),
        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=docs),
        sort_text=f"{rank:04d}",
        # Starts with what was typed, so the client's own filter keeps every item the server chose.
        filter_text=f"{typing.typed}{s.title} {s.path}",
        text_edit=types.TextEdit(range=edit_range, new_text=s.insert),
        additional_text_edits=extra or None,
    )


# -- definition and document links ----------------------------------------------------------------
async def _resolve(ls: KblsServer, path: Path, refs: list[LinkRef], lines: list[str]) -> Resolved | None:
    try:
        return await ls.call(ls.query_pool, ls.daemon.resolve_links, path, refs, lines)
    except (JsonRpcInvalidParams, OutsideRootError):
        return None


def target_uri(folder: Path, target: LinkTarget) -> str:
    """The target's URI; a heading's line as `#L<n>` (1-based), as the hover's links write it."""
    uri = file_uri(folder / target.path)
    return f"{uri}#L{target.line + 1}" if target.line else uri


async def definition(ls: KblsServer, params: types.DefinitionParams) -> list[types.Location] | None:
    opened = open_document(ls.workspace, params.text_document.uri, types.TEXT_DOCUMENT_DEFINITION)
    if opened is None:
        return None
    document, path = opened
    view = view_of(ls, document)
    lines = view.lines
    at = _server_position(document, list(document.lines), params.position)
    ref = view.link_at(at.line, at.character) if at is not None else None
    if ref is None:
        return None
    answer = await _resolve(ls, path, [ref], lines)
    if answer is None or not answer.targets[0]:
        return None
    return [
        types.Location(
            uri=file_uri(answer.folder / t.path),
            range=types.Range(start=types.Position(line=t.line, character=0), end=types.Position(line=t.line, character=0)),
        )
        for t in answer.targets[0]
    ]


async def document_link(ls: KblsServer, params: types.DocumentLinkParams) -> list[types.DocumentLink] | None:
    opened = open_document(ls.workspace, params.text_document.uri, types.TEXT_DOCUMENT_DOCUMENT_LINK)
    if opened is None:
        return None
    document, path = opened
    raw = list(document.lines)
    view = view_of(ls, document)
    lines = view.lines
    refs = view.links[:MAX_DOCUMENT_LINKS]
    if not refs:
        return []
    answer = await _resolve(ls, path, refs, lines)
    if answer is None:
        return None
    out = []
    for ref, targets in zip(refs, answer.targets, strict=True):
        if targets:  # an ambiguous name links its best match; definition offers them all
            best = targets[0]
            out.append(types.DocumentLink(
                range=_client_range(document, raw, ref.line, ref.start, ref.end),
                target=target_uri(answer.folder, best), tooltip=best.title or best.path,
            ))
    return out
