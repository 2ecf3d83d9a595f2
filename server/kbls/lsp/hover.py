"""`textDocument/hover`: related notes where they help a writer, not under every word.

- On a heading (ATX `## Text`, or setext text over `===`/`---`): the notes related to that
  section.
- On a link to a note: where it leads, and the notes related to that section.
- In prose: nothing, unless the client's setting `kbls.hover.prose` is true (asked with
  `workspace/configuration`, scoped to the note); then the notes related to the section.
  Hovering in prose is mostly reading: a popup on every pause of the mouse hides the text.

A note the client has not opened (no text to tell a heading from prose) gets the notes related
to the section at the line, as every line did before.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from kbls.daemon.answers import SearchAnswer
from kbls.errors import OutsideRootError
from kbls.lsp import convert
from kbls.lsp.links import _server_position, target_uri
from kbls.lsp.uris import client_uri, open_document
from kbls.lsp.views import view_of

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

log = logging.getLogger(__name__)

HOVER_LIMIT = 5
#: the client setting (`workspace/configuration` section) whose `prose` key turns prose hovers on.
SETTINGS_SECTION = "kbls.hover"


def register(server: KblsServer) -> None:
    server.feature(types.TEXT_DOCUMENT_HOVER)(hover)


async def hover(ls: KblsServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    opened = open_document(ls.workspace, uri, types.TEXT_DOCUMENT_HOVER)
    try:
        if opened is None:
            path = client_uri(uri).path
            return convert.hover(await _related(ls, path, params.position.line)) if path else None
        document, path = opened
        raw = list(document.lines)
        at = _server_position(document, raw, params.position)
        if at is None:
            return None
        view = view_of(ls, document)
        lines = view.lines
        if view.is_heading(at.line):
            return convert.hover(await _related(ls, path, at.line))
        ref = view.link_at(at.line, at.character)
        if ref is not None:
            resolved = await ls.call(ls.query_pool, ls.daemon.resolve_links, path, [ref], lines)
            targets = resolved.targets[0]
            if not targets:
                return None
            target = targets[0]
            answer = await _related(ls, resolved.folder / target.path, target.line)
            return convert.link_hover(target.title or target.path, target_uri(resolved.folder, target), answer)
        if await prose_wanted(ls, uri):
            return convert.hover(await _related(ls, path, at.line))
        return None
    except (JsonRpcInvalidParams, OutsideRootError):
        return None  # a note outside the knowledge base: nothing to say


async def _related(ls: KblsServer, path: Path, line: int) -> SearchAnswer:
    return await ls.call(ls.query_pool, ls.daemon.related, path, line, HOVER_LIMIT)


async def prose_wanted(ls: KblsServer, uri: str) -> bool:
    """The client's `kbls.hover.prose` for the note at `uri`; false where it has no such setting
    or cannot be asked."""
    workspace = ls.client_capabilities.workspace
    if workspace is None or not workspace.configuration:
        return False
    item = types.ConfigurationItem(scope_uri=uri, section=SETTINGS_SECTION)
    try:
        answer: Sequence[Any] = await ls.workspace_configuration_async(types.ConfigurationParams(items=[item]))
    except Exception as exc:  # the client's business: no answer is no setting
        log.debug("workspace/configuration for %s failed: %s", SETTINGS_SECTION, exc)
        return False
    settings = answer[0] if answer else None
    value = settings.get("prose") if isinstance(settings, dict) else getattr(settings, "prose", None)
    return value is True
