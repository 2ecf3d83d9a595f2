"""Rename: `textDocument/prepareRename` and `textDocument/rename` of a note's title, a heading
or a `#tag`, and `workspace/willRenameFiles`, the link edits that keep every link leading to a
moved file or folder (the client applies them before it moves the files).

Thin handlers over `Engine.renames` (`kbls.retrieval.rename`), reached through `Daemon.in_root`.
The answer is one `WorkspaceEdit`: per note a `TextDocumentEdit` carrying the version of an
open note (its edits were computed on the editor's text, unsaved changes included), or plain
`changes` for a client without `documentChanges`. Only notes of the root holding the renamed
note are edited; a move into another root, or out of every root, edits nothing; moves in several
roots at once (a multi-root workspace) get each root's edits in the one answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from kbls.engine import Engine
from kbls.errors import OutsideRootError
from kbls.lsp import opennotes
from kbls.retrieval.rename import RenamePlan, RenameTarget

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

#: every file and folder: a moved image keeps its links too.
MOVED = types.FileOperationRegistrationOptions(
    filters=[types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*"), scheme="file")]
)


def register(server: KblsServer) -> None:
    server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)(prepare_rename)
    server.feature(types.TEXT_DOCUMENT_RENAME)(rename)
    server.feature(types.WORKSPACE_WILL_RENAME_FILES, MOVED)(will_rename_files)


async def prepare_rename(ls: KblsServer, params: types.PrepareRenameParams) -> types.PrepareRenamePlaceholder | None:
    at = opennotes.cursor(ls, params.text_document.uri, params.position, "prepareRename")
    if at is None:
        return None
    path, view, line, character = at

    def ask(engine: Engine, rel: str) -> RenameTarget:
        return engine.renames.prepare(rel, view, line, character)

    found = await ls.call(ls.query_pool, ls.daemon.in_root, path, ask)  # RenameError: said to the user
    units = opennotes.encoding(ls)
    return types.PrepareRenamePlaceholder(
        range=opennotes.span_range(found.answer.span, units), placeholder=found.answer.placeholder
    )


async def rename(ls: KblsServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
    at = opennotes.cursor(ls, params.text_document.uri, params.position, "rename")
    if at is None:
        return None
    path, view, line, character = at
    documents = opennotes.texts(ls)

    def ask(engine: Engine, rel: str) -> RenamePlan:
        return engine.renames.rename(rel, view, line, character, params.new_name, engine.open_notes(documents))

    found = await ls.call(ls.query_pool, ls.daemon.in_root, path, ask)
    return workspace_edit(ls, [(found.folder, found.answer)])


async def will_rename_files(ls: KblsServer, params: types.RenameFilesParams) -> types.WorkspaceEdit | None:
    pairs = [(opennotes.file_path(f.old_uri), opennotes.file_path(f.new_uri)) for f in params.files]
    moves = [(old, new) for old, new in pairs if old is not None and new is not None]
    documents = opennotes.texts(ls)
    plans: list[tuple[Path, RenamePlan]] = []
    roots: set[str] = set()
    done: set[Path] = set()
    for old, _ in moves:
        if old in done:
            continue

        def ask(engine: Engine, rel: str) -> tuple[list[Path], RenamePlan]:
            inside = _inside(engine, moves)
            plan = engine.renames.moves([pair for _, pair in inside], engine.open_notes(documents))
            return [old for old, _ in inside], plan

        try:
            found = await ls.call(ls.query_pool, ls.daemon.in_root, old, ask)
        except (JsonRpcInvalidParams, OutsideRootError):
            continue
        handled, plan = found.answer
        done.update(handled or [old])
        if found.root_uri not in roots:  # each root's plan once, its folder making its URIs
            roots.add(found.root_uri)
            plans.append((found.folder, plan))
    return workspace_edit(ls, plans)


def _inside(engine: Engine, moves: list[tuple[Path, Path]]) -> list[tuple[Path, tuple[str, str]]]:
    """The moves of `moves` within `engine`'s root (from and to), as root-relative paths."""
    out = []
    for old, new in moves:
        try:
            out.append((old, (engine.scanner.relative(old), engine.scanner.relative(new))))
        except OutsideRootError:
            continue
    return out


def workspace_edit(ls: KblsServer, plans: list[tuple[Path, RenamePlan]]) -> types.WorkspaceEdit | None:
    """The plans (each with the folder of its root, as the client named it) as one edit; None when
    nothing changes."""
    units = opennotes.encoding(ls)
    versions = opennotes.versions(ls)
    capabilities = ls.client_capabilities.workspace
    edit_caps = capabilities.workspace_edit if capabilities is not None else None
    versioned = bool(edit_caps is not None and edit_caps.document_changes)
    changes: dict[str, list[types.TextEdit]] = {}
    documents: list[types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile] = []
    for folder, plan in plans:
        for note in plan.notes:
            uri = opennotes.note_uri(folder, note.path)
            edits = [
                types.TextEdit(range=opennotes.text_range(note.lines, e.line, e.start, e.end, units, e.end_line), new_text=e.text)
                for e in note.edits
            ]
            if not edits:
                continue
            changes.setdefault(uri, []).extend(edits)
            version = versions.get(folder / note.path) if note.open else None
            documents.append(types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                edits=list(edits),
            ))
    if not changes:
        return None
    return types.WorkspaceEdit(document_changes=documents) if versioned else types.WorkspaceEdit(changes=changes)

