"""The session's lifecycle and the files and folders the client reports: `initialize`,
`initialized`, `shutdown`, `didSave`, `workspace/didChangeWatchedFiles`,
`workspace/didChangeWorkspaceFolders`."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from kbls.lsp import convert
from kbls.lsp.uris import client_uri, file_uri

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

log = logging.getLogger(__name__)


def register(server: KblsServer) -> None:
    server.feature(types.INITIALIZE)(initialize)
    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.SHUTDOWN)(shutdown)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(did_save)
    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(did_change_watched_files)
    server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(did_change_folders)


def initialize(ls: KblsServer, params: types.InitializeParams) -> None:
    ls.setup(params.initialization_options, _folders(params), _watches_files(params.capabilities))


def initialized(ls: KblsServer, params: types.InitializedParams) -> None:
    ls.start()
    ls.watch_files()


async def shutdown(ls: KblsServer, params: Any) -> None:
    # Letting go of the folders may close engines: not on the event loop.
    await asyncio.get_running_loop().run_in_executor(None, ls.daemon.shutdown)


def did_save(ls: KblsServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.start()
    path = client_uri(params.text_document.uri).path
    if path is not None:
        ls.daemon.file_saved(path)


def did_change_watched_files(ls: KblsServer, params: types.DidChangeWatchedFilesParams) -> None:
    ls.start()
    ls.daemon.files_changed(convert.file_changes(params))


def did_change_folders(ls: KblsServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    for folder in params.event.removed:
        if (path := client_uri(folder.uri).path) is not None:
            ls.daemon.remove_root(path)
    for folder in params.event.added:
        if (path := client_uri(folder.uri).path) is not None:
            ls.daemon.add_root(folder.uri, path)


def _folders(params: types.InitializeParams) -> list[tuple[str, Path]]:
    """Workspace folders as (uri, path); falls back to rootUri / rootPath."""
    uris = [f.uri for f in params.workspace_folders or []]
    if not uris and params.root_uri:
        uris = [params.root_uri]
    out = []
    for uri in uris:
        path = client_uri(uri).path
        if path is not None:
            out.append((uri, path))
        else:
            log.warning("ignoring workspace folder %s: not a file:// URI", uri)
    if not out and params.root_path:
        out.append((file_uri(params.root_path), Path(params.root_path)))
    return out


def _watches_files(capabilities: types.ClientCapabilities) -> bool:
    """The client can register `workspace/didChangeWatchedFiles` at run time."""
    workspace = capabilities.workspace
    watched = workspace.did_change_watched_files if workspace is not None else None
    return bool(watched is not None and watched.dynamic_registration)
