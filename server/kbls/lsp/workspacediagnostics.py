"""`workspace/diagnostic`: the link problems of the notes the editor has not open, for a
problems panel that lists the whole workspace (VS Code's, with `problems.visibility`; Neovim
0.11's `vim.lsp.buf.workspace_diagnostics()`), from the index (`kbls.editing.workspacecheck`).

Open notes are left out: their problems come by `textDocument/diagnostic` or are pushed
(`kbls.lsp.diagnostics`), from their text in the editor. Each note's report has a result id; a
note whose id the client sends back unchanged is answered `unchanged`, a note it had a report of
that now writes no links (or was deleted) gets an empty one, a note with no problems that it
never had a report of is not listed. Roots are the client's workspace folders, each asked once
(a root nested in another answers for its own notes). Registered by `kbls.lsp.diagnostics`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from kbls.editing.workspacecheck import RootProblems, root_problems
from kbls.engine import Engine
from kbls.errors import OutsideRootError
from kbls.lsp import opennotes
from kbls.lsp.severities import SOURCE, severity_of
from kbls.lsp.uris import client_uri, file_uri

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

log = logging.getLogger(__name__)

Report = types.WorkspaceFullDocumentDiagnosticReport | types.WorkspaceUnchangedDocumentDiagnosticReport


async def workspace_diagnostic(ls: KblsServer, params: types.WorkspaceDiagnosticParams) -> types.WorkspaceDiagnosticReport:
    #: the client's reports by document key: (its URI, the result id)
    previous = {client_uri(p.uri).key: (p.uri, p.value) for p in params.previous_result_ids}
    documents = opennotes.texts(ls)
    units = opennotes.encoding(ls)
    items: list[Report] = []
    roots: set[Path] = set()
    for folder in _folders(ls):

        def ask(engine: Engine, rel: str) -> tuple[Path, RootProblems]:
            return engine.root, root_problems(engine, set(engine.open_notes(documents)))

        try:
            found = await ls.call(ls.query_pool, ls.daemon.in_root, folder, ask)
        except (JsonRpcException, OutsideRootError) as exc:
            log.debug("no workspace diagnostics for %s: %s", folder, exc)
            continue
        root, problems = found.answer
        if root not in roots:
            roots.add(root)
            items += _reports(found.folder, problems, previous, units)
    # the notes the client has reports of that no root lists now (deleted, or no link left)
    items += [types.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=[], version=None) for uri, _ in previous.values()]
    return types.WorkspaceDiagnosticReport(items=items)


def _folders(ls: KblsServer) -> list[Path]:
    folders = [client_uri(f.uri).path for f in ls.workspace.folders.values()]
    if not folders and ls.workspace.root_uri:
        folders = [client_uri(ls.workspace.root_uri).path]
    return [f for f in folders if f is not None]


def _reports(folder: Path, problems: RootProblems, previous: dict[str, tuple[str, str]], units: str) -> list[Report]:
    """The root's notes' reports; each note listed is taken out of `previous`."""
    out: list[Report] = []
    for note in problems.notes:
        uri = file_uri(folder / note.path)
        key = client_uri(uri).key
        known = previous.pop(key, None)
        if known is not None and known[1] == note.result_id:
            out.append(types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, result_id=note.result_id, version=None))
            continue
        diagnostics = []
        for problem, span in note.problems:
            severity = severity_of(problems.severities, problem)
            if severity is None:
                continue
            start, end = span.columns(units)
            diagnostics.append(types.Diagnostic(
                range=types.Range(types.Position(span.line, start), types.Position(span.line, end)),
                message=problem.message, severity=severity, code=problem.problem.value, source=SOURCE,
            ))
        if diagnostics or known is not None:
            out.append(types.WorkspaceFullDocumentDiagnosticReport(
                uri=uri, items=diagnostics, version=None, result_id=note.result_id,
            ))
    return out
