"""Work-done progress (`$/progress`) for the daemon's indexing, on tokens the server creates.

The daemon's worker asks for a progress from its own thread; the token must first be created
with `window/workDoneProgress/create` (a request the client answers later), so reports and the
end that arrive before the answer are kept (the latest of each) and sent once the token exists.
Everything here runs on the event loop: the worker's calls are handed over by `later`, in order.
The token's state is recorded by the first of them, not by the task that asks for the token: an
end handed over right after its begin (a scan with nothing to do) ran before that task's first
step and was dropped, leaving the client's progress open for good.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from lsprotocol import types
from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

#: seconds the client has to answer `window/workDoneProgress/create`.
CREATE_TIMEOUT = 10


@dataclass
class _Token:
    #: the client created it: events go out at once.
    ready: bool = False
    #: the latest report (percentage, message) and end message that arrived before it was ready.
    report: tuple[int, str] | None = None
    end: str | None = None
    #: the task asking the client for the token (kept: the loop holds tasks weakly).
    creating: asyncio.Task[None] | None = None


class ProgressTokens:
    """Begin, report and end work-done progress for the daemon (its `Listener` progress calls)."""

    def __init__(self, server: LanguageServer, later: Callable[..., None]) -> None:
        self._server = server
        self._later = later
        #: token -> its state; event loop only.
        self._tokens: dict[str, _Token] = {}

    def begin(self, title: str, message: str) -> object:
        """A new token (None when the client cannot show progress); any thread."""
        window = getattr(self._server.client_capabilities, "window", None)
        if not getattr(window, "work_done_progress", False):
            return None
        token = f"kbls-{uuid.uuid4()}"
        self._later(self._start, token, title, message)
        return token

    def report(self, handle: object, percentage: int, message: str) -> None:
        if isinstance(handle, str):
            self._later(self._report, handle, percentage, message)

    def end(self, handle: object, message: str) -> None:
        if isinstance(handle, str):
            self._later(self._end, handle, message)

    def _start(self, token: str, title: str, message: str) -> None:
        """Record the token before any report or end handed over after it, then ask for it."""
        state = self._tokens[token] = _Token()
        state.creating = asyncio.ensure_future(self._create(token, state, title, message))

    async def _create(self, token: str, state: _Token, title: str, message: str) -> None:
        """Ask the client for the token; send begin, then whatever arrived meanwhile."""
        try:
            await asyncio.wait_for(self._server.work_done_progress.create_async(token), CREATE_TIMEOUT)
        except Exception as exc:  # the client refused or never answered: no progress UI
            log.info("window/workDoneProgress/create failed: %s", exc)
            self._tokens.pop(token, None)
            return
        state.ready = True
        self._server.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title=title, message=message, percentage=0, cancellable=False)
        )
        if state.report is not None:
            self._report(token, *state.report)
        if state.end is not None:
            self._end(token, state.end)

    def _report(self, token: str, percentage: int, message: str) -> None:
        state = self._tokens.get(token)
        if state is None:
            return
        if not state.ready:
            state.report = (percentage, message)  # keep the latest; sent once the token exists
            return
        self._server.work_done_progress.report(
            token, types.WorkDoneProgressReport(message=message, percentage=percentage)
        )

    def _end(self, token: str, message: str) -> None:
        state = self._tokens.get(token)
        if state is None:
            return
        if not state.ready:
            state.end = message
            return
        self._server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        self._tokens.pop(token, None)

