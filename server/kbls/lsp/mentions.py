"""Unlinked mentions in the editor: code actions (`refactor.rewrite`) on the paragraph under the
cursor, each linking a note it names in plain text or talks about (`kbls.editing.mentions`), and
the optional hint diagnostic (`diagnostics.unlinked_mention`, off by default) on every name of a
note written unlinked. `kbls.lsp.codeactions` and `kbls.lsp.diagnostics` call these.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from kbls.editing import mentions
from kbls.editing.mentions import Mention
from kbls.engine import Engine
from kbls.links.view import NoteView

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

CODE = "unlinked_mention"


def _range(document: TextDocument, raw: list[str], mention: Mention) -> types.Range:
    span = ServerTextRange(ServerTextPosition(mention.line, mention.start), ServerTextPosition(mention.line, mention.end))
    return document.position_codec.range_to_client_units(raw, span)


async def actions(
    ls: KblsServer, document: TextDocument, path: Path, raw: list[str], lines: list[str], line: int, meaning: bool
) -> list[types.CodeAction]:
    """The paragraph at `line`'s unlinked mentions (`meaning`: those by meaning too), each a code
    action that links it."""

    def ask(engine: Engine, rel: str) -> list[Mention]:
        return mentions.mentions(engine.links, rel, lines, line, meaning)

    try:
        found = await ls.call(ls.query_pool, ls.daemon.in_root, path, ask)
    except JsonRpcException:
        return []
    out = []
    for mention in found.answer:
        title = (
            f'Link "{mention.words}" to "{mention.title or mention.path}"' if mention.how != "meaning"
            else f'Add a link to "{mention.title or mention.path}" (related by meaning, {mention.score:.2f})'
        )
        edit = types.TextEdit(_range(document, raw, mention), mention.text)
        out.append(types.CodeAction(
            title=title, kind=types.CodeActionKind.RefactorRewrite,
            edit=types.WorkspaceEdit(changes={document.uri: [edit]}),
        ))
    return out


def hint_diagnostics(
    engine: Engine, rel: str, document: TextDocument, raw: list[str], view: NoteView, severity: types.DiagnosticSeverity
) -> list[types.Diagnostic]:
    """A diagnostic on each name of another note written unlinked (on the query thread)."""
    return [
        types.Diagnostic(
            range=_range(document, raw, m), severity=severity, code=CODE, source="kbls",
            message=f'"{m.words}" names the note "{m.title or m.path}": link it?',
        )
        for m in mentions.note_name_mentions(engine.links, rel, view)
    ]
