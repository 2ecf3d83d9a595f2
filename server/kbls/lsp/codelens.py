"""Counts on a note's title: `textDocument/codeLens` answers one lens, on the title's line (front
matter `title:` or the H1; else the first line), "12 backlinks · 5 related", whose command,
`kbls.showBacklinks` with the note's URI, is the client's backlinks picker (the VS Code extension
and the Neovim plugin register it). Backlinks are the other notes linking here
(`LinkGraph.count`), related the notes `kb/related` lists for the whole note. Thin over the
engine through `Daemon.in_root`; no lens for a note outside every root or not open. Each time
indexing settles (a note linking here may have been saved, moved or deleted elsewhere) a client
that takes `workspace/codeLens/refresh` is told to ask again; others ask on open and edit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from kbls.daemon.answers import IndexState
from kbls.engine import Engine
from kbls.errors import OutsideRootError
from kbls.limits import RELATED_LIMIT
from kbls.links.edits import title_line
from kbls.lsp import opennotes, uris
from kbls.lsp.featurestate import state_of
from kbls.lsp.views import view_of

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

#: the client command the lens runs (the VS Code extension's and the Neovim plugin's).
SHOW_BACKLINKS = "kbls.showBacklinks"


def register(server: KblsServer) -> None:
    server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))(code_lens)


class Lenses:
    """What the lenses of one client last saw of the index."""

    def __init__(self, ls: KblsServer) -> None:
        self.ls = ls
        self._last_settled: bool | None = None

    def index_changed(self, state: IndexState) -> None:
        # the backlink counts are right once every note is written, not when the last vector is
        settled = state.links_settled and self._last_settled is False
        self._last_settled = state.links_settled
        if settled and _takes_refresh(self.ls):
            self.ls.workspace_code_lens_refresh(None)


def _takes_refresh(ls: KblsServer) -> bool:
    workspace = ls.client_capabilities.workspace
    lens = workspace.code_lens if workspace is not None else None
    return bool(lens is not None and lens.refresh_support)


def index_changed(ls: KblsServer, state: IndexState) -> None:
    """On the event loop, for every `kb/indexStatus` the server sends (`kbls.lsp.diagnostics`)."""
    state_of(ls, Lenses).index_changed(state)


def lens_title(backlinks: int, related: int) -> str:
    """`12 backlinks · 5 related` (`1 backlink`, `no backlinks`)."""
    links = "no backlinks" if backlinks == 0 else f"{backlinks} backlink{'s' if backlinks != 1 else ''}"
    return f"{links} · {related} related"


async def code_lens(ls: KblsServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
    opened = uris.open_document(ls.workspace, params.text_document.uri, "codeLens")
    if opened is None:
        return None
    document, path = opened
    lines = view_of(ls, document).lines
    documents = opennotes.texts(ls)

    def ask(engine: Engine, rel: str) -> tuple[int, int, int]:
        note = engine.links.catalogue().by_path.get(rel)
        line = (title_line(lines, note.title) if note is not None else None) or 0
        backlinks = engine.graph.count(rel, engine.open_notes(documents))
        related = [hit for hit in engine.related(engine.root / rel, None, limit=RELATED_LIMIT) if hit.reasons]
        return line, backlinks, len(related)

    try:
        found = await ls.call(ls.query_pool, ls.daemon.in_root, path, ask)
    except (JsonRpcInvalidParams, OutsideRootError):
        return None
    line, backlinks, related = found.answer
    where = types.Range(types.Position(line, 0), types.Position(line, 0))
    command = types.Command(title=lens_title(backlinks, related), command=SHOW_BACKLINKS, arguments=[params.text_document.uri])
    return [types.CodeLens(range=where, command=command)]
