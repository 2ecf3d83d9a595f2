"""Link diagnostics of open notes: a link to no note, to a missing heading, an ambiguous wiki
name (with its notes), a path leaving the root (`kbls.editing.linkcheck`, severities from the
root's `diagnostics:` config; nothing in code).

A client that pulls and can be told to pull again (`textDocument.diagnostic` and
`workspace.diagnostics.refreshSupport`: VS Code) asks with `textDocument/diagnostic` and is sent
`workspace/diagnostic/refresh` when the index changed. Any other client is sent
`textDocument/publishDiagnostics` at didOpen, `DEBOUNCE_S` after the last didChange, and for
every open note once indexing settles (a note created or renamed elsewhere mends or breaks
links); its pulls, if it makes any (Neovim 0.11 pulls but takes no refresh), are answered empty,
so no problem shows twice. A document the client closed is cleared. Checks run on the query
threads; the answer for a version already superseded is dropped.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from kbls.daemon.answers import IndexState
from kbls.editing import checks
from kbls.editing.checks import LinkReport
from kbls.editing.linkcheck import LinkProblem
from kbls.engine import Engine
from kbls.lsp import codelens, mentions, uris, workspacediagnostics
from kbls.lsp.featurestate import state_of
from kbls.lsp.severities import SEVERITIES, SOURCE, severity_of
from kbls.lsp.uris import client_uri, file_uri
from kbls.lsp.views import Views, view_of

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

log = logging.getLogger(__name__)

#: quiet time after the last keystroke before a note's links are checked again.
DEBOUNCE_S = 0.25


def register(server: KblsServer) -> None:
    server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=True),
    )(pull)
    server.feature(types.WORKSPACE_DIAGNOSTIC)(workspacediagnostics.workspace_diagnostic)


class Diagnostics:
    """The checks scheduled per open document of one client, and how that client gets them."""

    def __init__(self, ls: KblsServer) -> None:
        self.ls = ls
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._running: dict[str, asyncio.Task[None]] = {}
        self._last_settled: bool | None = None

    @property
    def pulls(self) -> bool:
        """The client pulls and takes `workspace/diagnostic/refresh` (else it is pushed to)."""
        capabilities = self.ls.client_capabilities
        text, workspace = capabilities.text_document, capabilities.workspace
        refresh = workspace.diagnostics if workspace is not None else None
        return bool(text is not None and text.diagnostic is not None and refresh is not None and refresh.refresh_support)

    def schedule(self, uri: str, delay: float) -> None:
        if self.pulls or self.ls.loop is None:
            return
        old = self._timers.pop(uri, None)
        if old is not None:
            old.cancel()
        self._timers[uri] = self.ls.loop.call_later(delay, self._start, uri)

    def _start(self, uri: str) -> None:
        self._timers.pop(uri, None)
        running = self._running.pop(uri, None)
        if running is not None:
            running.cancel()
        task = asyncio.ensure_future(self._publish(uri))
        task.add_done_callback(_log_failure)
        self._running[uri] = task

    async def _publish(self, uri: str) -> None:
        document = open_text(self.ls, uri)
        if document is None:
            return
        version = document.version
        found = await diagnostics_of(self.ls, document)
        current = open_text(self.ls, uri)
        if found is None or current is None or current.version != version:
            return  # not a note of a root, or a newer version is on its way
        views = state_of(self.ls, Views)
        views.warm_answers(current)  # before: the editor may ask for them as soon as it has these
        self.ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, found, version))
        views.warm_outline(current)

    def closed(self, uri: str) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        running = self._running.pop(uri, None)
        if running is not None:
            running.cancel()
        if not self.pulls:
            self.ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    def index_changed(self, state: IndexState) -> None:
        """The notes settled after a scan or save (`links_settled`: every note written, vectors
        may still be coming): other notes may have appeared or gone."""
        settled = state.links_settled and self._last_settled is False
        self._last_settled = state.links_settled
        if not settled:
            return
        if self.pulls:
            self.ls.workspace_diagnostic_refresh(None)
            return
        for document in list(self.ls.workspace.text_documents.values()):
            self.schedule(document.uri, DEBOUNCE_S)


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("checking the links of a note failed", exc_info=task.exception())


def document_opened(ls: KblsServer, uri: str) -> None:
    state_of(ls, Diagnostics).schedule(uri, 0.0)


def document_changed(ls: KblsServer, uri: str) -> None:
    state_of(ls, Diagnostics).schedule(uri, DEBOUNCE_S)


def document_closed(ls: KblsServer, uri: str) -> None:
    state_of(ls, Diagnostics).closed(uri)


def index_changed(ls: KblsServer, state: IndexState) -> None:
    """On the event loop, for every `kb/indexStatus` the server sends: the link problems, and the
    backlink counts of the code lenses, follow the index."""
    state_of(ls, Diagnostics).index_changed(state)
    codelens.index_changed(ls, state)


async def pull(ls: KblsServer, params: types.DocumentDiagnosticParams) -> types.RelatedFullDocumentDiagnosticReport:
    document = uris.open_text(ls.workspace, params.text_document.uri, types.TEXT_DOCUMENT_DIAGNOSTIC)
    if document is None or not state_of(ls, Diagnostics).pulls:
        return types.RelatedFullDocumentDiagnosticReport(items=[])  # pushed to this client instead
    found = await diagnostics_of(ls, document)
    return types.RelatedFullDocumentDiagnosticReport(items=found or [])


def open_text(ls: KblsServer, uri: str) -> TextDocument | None:
    """The open document at `uri` as the client sent it (pygls keeps it under another key)."""
    found: TextDocument | None = ls.workspace.text_documents.get(client_uri(uri).key)
    return found


async def diagnostics_of(ls: KblsServer, document: TextDocument) -> list[types.Diagnostic] | None:
    """The diagnostics of an open document's links; None outside every root or while its store
    cannot be read."""
    path = client_uri(document.uri).path
    if path is None:
        return None
    raw = list(document.lines)
    view = view_of(ls, document)
    try:
        checked = await ls.call(ls.query_pool, ls.daemon.in_root, path, partial(checks.report, view=view))
        found = to_diagnostics(checked.answer, checked.folder, document, raw)
        hint = SEVERITIES.get(checked.answer.severities.unlinked_mention)
        if hint is not None:

            def ask(engine: Engine, rel: str) -> list[types.Diagnostic]:
                return mentions.hint_diagnostics(engine, rel, document, raw, view, hint)

            found += (await ls.call(ls.query_pool, ls.daemon.in_root, path, ask)).answer
    except JsonRpcException as exc:
        log.debug("no diagnostics for %s: %s", document.uri, exc)
        return None
    return found


def to_diagnostics(report: LinkReport, folder: Path, document: TextDocument, raw: list[str]) -> list[types.Diagnostic]:
    out = []
    for problem in report.problems:
        severity = severity_of(report.severities, problem)
        if severity is None:
            continue
        out.append(types.Diagnostic(
            range=link_range(document, raw, problem), message=problem.message, severity=severity,
            code=problem.problem.value, source=SOURCE,
            related_information=[
                types.DiagnosticRelatedInformation(
                    types.Location(file_uri(folder / path), types.Range(
                        types.Position(0, 0), types.Position(0, 0))),
                    path,
                )
                for path in problem.notes
            ] or None,
        ))
    return out


def link_range(document: TextDocument, raw: list[str], problem: LinkProblem) -> types.Range:
    ref = problem.ref
    if ref.line < len(raw) and raw[ref.line].isascii():  # a character is one unit in every encoding
        return types.Range(types.Position(ref.line, ref.start), types.Position(ref.line, ref.end))
    span = ServerTextRange(ServerTextPosition(ref.line, ref.start), ServerTextPosition(ref.line, ref.end))
    return document.position_codec.range_to_client_units(raw, span)
