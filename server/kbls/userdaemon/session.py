"""What the relay remembers of one editor session, so that a new daemon picks up where the lost one stopped.

The editor's `initialize` (with the workspace folders as they are now), whether it sent
`initialized`, its requests not answered yet, the backend's requests and progress tokens, and
the documents it has open: each `didOpen`/`didChange`/`didClose` is applied here as the daemon
applies it (the same pygls document, cut into lines as LSP counts them), so a new daemon is told
`didOpen` with the text the editor has, unsaved changes included, at the version it last sent.
Without that the new daemon knew no open document: every keystroke was answered with
`Error in server: KeyError` and completion and definition found nothing to read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from kbls.jsonrpc import REQUEST_FAILED, error
from kbls.lsp.documents import LspLinesDocument

LOST_MESSAGE = "the kbls daemon stopped while answering; kbls has reconnected: try again"
DID_OPEN, DID_CHANGE, DID_CLOSE = "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose"
DOCUMENT_METHODS = frozenset({DID_OPEN, DID_CHANGE, DID_CLOSE})


@dataclass
class Session:
    """What a new daemon must be told to pick up where the old one stopped."""

    initialize: dict[str, Any] | None = None
    initialized: bool = False
    #: the editor's requests not answered yet: id -> method
    pending: dict[int | str, str] = field(default_factory=dict)
    #: the current backend's requests to the editor not answered yet
    server_requests: set[int | str] = field(default_factory=set)
    #: ids of the relay's own replayed `initialize` (their answers are dropped)
    own_ids: set[int | str] = field(default_factory=set)
    #: work-done progress tokens the backend began and has not ended (ended for it if it is lost)
    progress: set[int | str] = field(default_factory=set)
    #: the editor's `initialize`, unanswered when its backend was lost: replayed under its id
    unanswered_initialize: int | str | None = None
    exiting: bool = False
    shutdown: bool = False
    #: the editor's open documents as it sees them: opened again in each new backend
    documents: OpenDocuments = field(default_factory=lambda: OpenDocuments())

    def from_editor(self, message: dict[str, Any]) -> bool:
        """Note an editor message; False when it must not be forwarded (a stale answer)."""
        method = message.get("method")
        if method is None:
            if "id" in message:  # an answer to the backend's request
                answered = message_id(message["id"])
                if answered is None or answered not in self.server_requests:
                    return False
                self.server_requests.discard(answered)
            return True
        if method == "initialize" and isinstance(message.get("params"), dict):
            self.initialize = dict(message["params"])
        elif method == "initialized":
            self.initialized = True
        elif method == "workspace/didChangeWorkspaceFolders":
            self._apply_folders(message.get("params"))
        elif method in DOCUMENT_METHODS:
            self.documents.note(method, message.get("params"))
        elif method == "exit":
            self.exiting = True
        elif method == "shutdown":
            self.shutdown = True
        return True

    def sent(self, message: dict[str, Any]) -> None:
        msg_id = message_id(message.get("id"))
        if "method" in message and msg_id is not None:
            self.pending[msg_id] = str(message["method"])

    def from_backend(self, message: dict[str, Any]) -> bool:
        """Note a backend message; False when it is the answer to a replayed `initialize`."""
        msg_id = message_id(message.get("id"))
        if "method" in message:
            if msg_id is not None:
                self.server_requests.add(msg_id)
            elif message["method"] == "$/progress":
                self._note_progress(message.get("params"))
            return True
        if msg_id is None:
            return True
        if msg_id in self.own_ids:
            self.own_ids.discard(msg_id)
            return False
        if self.pending.pop(msg_id, None) == "initialize":
            self.documents.negotiated(message.get("result"))
        return True

    def _note_progress(self, params: Any) -> None:
        if not isinstance(params, dict) or not isinstance(params.get("value"), dict):
            return
        kind, token = params["value"].get("kind"), message_id(params.get("token"))
        if token is None:
            return
        if kind == "begin":
            self.progress.add(token)
        elif kind == "end":
            self.progress.discard(token)

    def lost(self) -> list[dict[str, Any]]:
        """The backend is gone: what the editor must be told (its requests failed, its progress
        ended; an unanswered `initialize` is kept for the next one), and the record of that
        backend cleared."""
        # The editor's `initialize` is not failed but sent to the next backend (`_replay`): an
        # editor gives up on a server whose `initialize` failed.
        waiting = [msg_id for msg_id, method in self.pending.items() if method == "initialize"]
        self.unanswered_initialize = waiting[0] if waiting else None
        out = [error(msg_id, REQUEST_FAILED, LOST_MESSAGE) for msg_id, method in self.pending.items() if method != "initialize"]
        out += [
            {"jsonrpc": "2.0", "method": "$/progress",
             "params": {"token": token, "value": {"kind": "end", "message": "the kbls daemon restarted"}}}
            for token in self.progress
        ]
        self.pending.clear()
        self.server_requests.clear()
        self.progress.clear()
        return out

    def _apply_folders(self, params: Any) -> None:
        if self.initialize is None or not isinstance(params, dict):
            return
        event = params.get("event")
        if not isinstance(event, dict):
            return  # not a folder change (the daemon answers it as malformed)
        removed = {f.get("uri") for f in objects(event.get("removed"))}
        folders = [f for f in objects(self.initialize.get("workspaceFolders")) if f.get("uri") not in removed]
        folders.extend(objects(event.get("added")))
        self.initialize["workspaceFolders"] = folders


class OpenDocuments:
    """The editor's open documents by URI, kept current by its notifications (see the module docstring).

    A notification that does not fit (an unknown URI, a malformed change) is left to the daemon,
    which answers it as it would have; the record of that document is dropped rather than kept
    wrong, so a replay never opens a text the editor does not have.
    """

    def __init__(self) -> None:
        self._open: dict[str, tuple[LspLinesDocument, str]] = {}  # uri -> (document, language id)
        self.codec = PositionCodec()

    def negotiated(self, result: Any) -> None:
        """The position encoding the backend chose in its `initialize` answer (UTF-16 unless it says)."""
        capabilities = result.get("capabilities") if isinstance(result, dict) else None
        encoding = capabilities.get("positionEncoding") if isinstance(capabilities, dict) else None
        if isinstance(encoding, str):
            self.codec = PositionCodec(encoding)

    def __len__(self) -> int:
        return len(self._open)

    def note(self, method: str, params: Any) -> None:
        document = params.get("textDocument") if isinstance(params, dict) else None
        uri = document.get("uri") if isinstance(document, dict) else None
        if not isinstance(uri, str) or not isinstance(document, dict):
            return
        if method == DID_CLOSE:
            self._open.pop(uri, None)
        elif method == DID_OPEN:
            text, version = document.get("text"), document.get("version")
            if isinstance(text, str):
                opened = LspLinesDocument(uri, source=text, version=_int(version), position_codec=self.codec)
                self._open[uri] = (opened, str(document.get("languageId") or ""))
        elif uri in self._open and not self._apply(self._open[uri][0], document, params.get("contentChanges")):
            del self._open[uri]

    def _apply(self, document: LspLinesDocument, identifier: dict[str, Any], changes: Any) -> bool:
        parsed = [_change(change) for change in changes] if isinstance(changes, list) else [None]
        try:
            for change in parsed:
                if change is None:
                    return False
                document.apply_change(change)
        except (IndexError, ValueError):  # a range past the text: the daemon says so, the record goes
            return False
        document.version = _int(identifier.get("version"))
        return True

    def reopen(self) -> list[dict[str, Any]]:
        """`didOpen` of every open document with its text and version now, for a new backend."""
        return [
            {"jsonrpc": "2.0", "method": DID_OPEN, "params": {"textDocument": {
                "uri": uri, "languageId": language, "version": document.version or 0, "text": document.source,
            }}}
            for uri, (document, language) in self._open.items()
        ]

    def text(self, uri: str) -> str | None:
        held = self._open.get(uri)
        return held[0].source if held is not None else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _position(value: Any) -> types.Position | None:
    if not isinstance(value, dict):
        return None
    line, character = _int(value.get("line")), _int(value.get("character"))
    if line is None or character is None or line < 0 or character < 0:
        return None
    return types.Position(line=line, character=character)


def _change(value: Any) -> types.TextDocumentContentChangeEvent | None:
    """One content change as pygls applies it: a range and its new text, or the whole text."""
    if not isinstance(value, dict) or not isinstance(value.get("text"), str):
        return None
    if "range" not in value:
        return types.TextDocumentContentChangeWholeDocument(text=value["text"])
    span = value.get("range")
    start = _position(span.get("start")) if isinstance(span, dict) else None
    end = _position(span.get("end")) if isinstance(span, dict) else None
    if start is None or end is None:
        return None
    return types.TextDocumentContentChangePartial(range=types.Range(start=start, end=end), text=value["text"])


def message_id(value: Any) -> int | str | None:
    """A JSON-RPC id (or progress token) the relay can keep: a number or a string; None for
    anything else (an object or a list would break the records, and answers nothing)."""
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a JSON list (a client's folder list); nothing for any other value."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []

