"""Quick fixes for the links under the cursor or selection (`textDocument/codeAction`): for a
link to no note, "did you mean" — the notes nearest in title and meaning, each rewriting the
link — and creating the note (`kbls.editing.newnote`); for an ambiguous name, the link rewritten
to name each of its notes alone; for a missing heading, the note's headings most alike it. And
(`refactor.rewrite`) the paragraph's unlinked mentions (`kbls.lsp.mentions`).

Each fix is computed from the document's text, not from the diagnostics the client sends back,
so a client that shows no diagnostics still gets them. Creating a note needs a client that can
create files (`workspace.workspaceEdit.resourceOperations` holds `create`).
"""

from __future__ import annotations

import datetime as dt
import logging
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from kbls.editing import checks
from kbls.editing.checks import LinkFixes
from kbls.editing.linkcheck import Problem
from kbls.engine import Engine
from kbls.links.syntax import LinkRef
from kbls.links.view import NoteView
from kbls.lsp import mentions
from kbls.lsp.uris import file_uri, open_document
from kbls.lsp.views import view_of

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

log = logging.getLogger(__name__)

#: links of one request given fixes (a selection over a long list of links gets its first ones).
MAX_FIXED_LINKS = 5


def register(server: KblsServer) -> None:
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite], resolve_provider=False
        ),
    )(code_action)


async def code_action(ls: KblsServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    opened = open_document(ls.workspace, params.text_document.uri, "codeAction")
    if opened is None:
        return None
    document, path = opened
    raw = list(document.lines)
    view = view_of(ls, document)
    lines = view.lines
    actions: list[types.CodeAction] = []
    if _wanted(params, types.CodeActionKind.RefactorRewrite) and params.range.start.line < len(lines):
        # asked by a keystroke (not the lightbulb's every cursor move): also by meaning
        invoked = params.context.trigger_kind != types.CodeActionTriggerKind.Automatic
        actions += await mentions.actions(ls, document, path, raw, lines, params.range.start.line, invoked)
    if not _wanted(params, types.CodeActionKind.QuickFix):
        return actions
    fixed: list[types.CodeAction] = []
    today = dt.date.today()
    for ref in links_under(document, raw, view, params.range)[:MAX_FIXED_LINKS]:
        try:
            found = await ls.call(ls.query_pool, ls.daemon.in_root, path, partial(_fixes, ref=ref, lines=lines, today=today))
        except JsonRpcException as exc:
            log.debug("no fixes for %s: %s", document.uri, exc)
            return None
        fixed.extend(fix_actions(ls, document, raw, ref, found.folder, found.answer, list(params.context.diagnostics)))
    return fixed + actions


def _fixes(engine: Engine, rel: str, ref: LinkRef, lines: list[str], today: dt.date) -> LinkFixes:
    return checks.fixes(engine.links, rel, ref, lines, today)


def _wanted(params: types.CodeActionParams, kind: types.CodeActionKind) -> bool:
    """The client asks for actions of `kind` (no `only`: every kind)."""
    only = params.context.only
    return not only or any(kind.value == asked or kind.value.startswith(f"{asked}.") for asked in only)


def links_under(document: TextDocument, raw: list[str], view: NoteView, where: types.Range) -> list[LinkRef]:
    """The links the range touches (the one holding the cursor for an empty range)."""
    lines = view.lines
    start = document.position_codec.position_from_client_units(raw, where.start) if where.start.line < len(raw) else None
    end = document.position_codec.position_from_client_units(raw, where.end) if where.end.line < len(raw) else None
    if start is None:
        return []
    last = end if end is not None else ServerTextPosition(len(raw) - 1, len(lines[-1]) if lines else 0)
    return [
        ref for ref in view.links
        if (ref.line, ref.end) >= (start.line, start.character)
        and (ref.line, ref.start) <= (last.line, last.character)
    ]


def fix_actions(
    ls: KblsServer, document: TextDocument, raw: list[str], ref: LinkRef, folder: Path, fixes: LinkFixes,
    sent: list[types.Diagnostic],
) -> list[types.CodeAction]:
    if fixes.problem is None:
        return []
    where = document.position_codec.range_to_client_units(
        raw, ServerTextRange(ServerTextPosition(ref.line, ref.start), ServerTextPosition(ref.line, ref.end))
    )
    matching = [d for d in sent if d.range == where and d.source == "kbls"] or None
    actions = []
    for rewrite in fixes.rewrites:
        title = (
            f"Link to {rewrite.path}" if fixes.problem.problem == Problem.AMBIGUOUS
            else f'Did you mean "{rewrite.title or rewrite.path}"? ({rewrite.path})'
        )
        actions.append(_rewrite(ls, title, document, where, rewrite.text, matching))
    for heading, text in fixes.headings:
        actions.append(_rewrite(ls, f'Link to heading "{heading}"', document, where, text, matching))
    if fixes.new_note is not None and _creates_files(ls):
        uri = file_uri(folder / fixes.new_note.path)
        created = types.WorkspaceEdit(document_changes=[
            types.CreateFile(uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True)),
            types.TextDocumentEdit(
                types.OptionalVersionedTextDocumentIdentifier(uri, None),
                [types.TextEdit(types.Range(types.Position(0, 0), types.Position(0, 0)), fixes.new_note.text)],
            ),
        ])
        actions.append(types.CodeAction(
            title=f'Create note "{fixes.new_note.title}" ({fixes.new_note.path})', kind=types.CodeActionKind.QuickFix,
            diagnostics=matching, edit=created,
        ))
    return actions


def _rewrite(
    ls: KblsServer, title: str, document: TextDocument, where: types.Range, text: str,
    matching: list[types.Diagnostic] | None,
) -> types.CodeAction:
    change = types.TextEdit(where, text)
    edit = types.WorkspaceEdit(document_changes=[
        types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(document.uri, document.version), [change])
    ]) if _edits_documents(ls) else types.WorkspaceEdit(changes={document.uri: [change]})
    return types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=matching, edit=edit)


def _edits_documents(ls: KblsServer) -> bool:
    """The client takes `documentChanges` (versioned edits), else only `changes`."""
    workspace = ls.client_capabilities.workspace
    edits = workspace.workspace_edit if workspace is not None else None
    return bool(edits is not None and edits.document_changes)


def _creates_files(ls: KblsServer) -> bool:
    """The client can create files in a workspace edit (a resource operation of `documentChanges`:
    Neovim declares the operations without `documentChanges` itself, and applies them)."""
    workspace = ls.client_capabilities.workspace
    edits = workspace.workspace_edit if workspace is not None else None
    operations = edits.resource_operations if edits is not None else None
    return bool(operations and types.ResourceOperationKind.Create in operations)
