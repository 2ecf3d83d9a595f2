"""Tag completion: after `#` in a note's text and in the front matter's `tags:`, the workspace's
tags starting with what was typed, most used first, each with the number of notes carrying it
(`Daemon.tags`, the `kb/tags` listing). `kbls.lsp.links` hands a completion request here when
the cursor is in a tag rather than a link (`kbls.editing.tagsyntax`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from kbls.daemon.answers import TagsAnswer
from kbls.editing.tagsyntax import TagTyping

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

#: tags offered per request (most used first; the list narrows as one types).
TAG_ITEMS = 50


async def complete(
    ls: KblsServer, document: TextDocument, raw: list[str], typing: TagTyping
) -> types.CompletionList | None:
    try:
        answer: TagsAnswer = await ls.call(ls.query_pool, ls.daemon.tags, typing.typed, TAG_ITEMS)
    except JsonRpcException:
        return None
    span = ServerTextRange(ServerTextPosition(typing.line, typing.start), ServerTextPosition(typing.line, typing.end))
    where = document.position_codec.range_to_client_units(raw, span)
    items = [
        types.CompletionItem(
            label=tag.name, kind=types.CompletionItemKind.Keyword,
            detail=f"{tag.count} note{'s' if tag.count != 1 else ''}", sort_text=f"{rank:04d}",
            filter_text=tag.name, text_edit=types.TextEdit(range=where, new_text=tag.name),
        )
        for rank, tag in enumerate(answer.tags)
    ]
    # incomplete: the server narrows by what is typed (the client's own filter would keep
    # the first TAG_ITEMS only)
    return types.CompletionList(is_incomplete=True, items=items)
