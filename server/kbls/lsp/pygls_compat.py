"""Every private name of pygls that kbls uses, in one place, each with a contract test
(`tests/lsp/test_pygls_compat.py`); `tests/lsp/test_pygls_compat.py` also greps that no other
module names a `_private` pygls attribute. pygls is pinned to its minor version (pyproject.toml):
a new minor must pass those tests before the pin moves.

Why each is needed, and its upstream fix (docs/architecture.md, pygls section):
- `send_data`, `send_error`: answering a frame pygls could not parse or type (our reader,
  `kbls.jsonrpc` and `kbls.lsp.transport`, replace pygls's, which dropped such frames and left the client waiting);
  upstream: a parse-error reply in `pygls/io_.py`.
- `install_stop_event`, `keep_tcp_server`: what `start_io`/`start_tcp` set up, for our reader
  loop, so that the `exit` notification still stops it.
- `report_server_error`: the server's error hook for a handler that raised outside pygls's loop.
- `DocumentFactory`: the hook that makes pygls's workspace build our `LspLinesDocument`.
- `ForgetNotificationFutures`: pygls keeps the future of every notification whose handler is a
  generator or a coroutine (its own didOpen/didChange/didClose: one per keystroke per connection)
  in `_request_futures` under a random id nobody pops, until the connection closes; the mixin
  drops each once it is done. Upstream: pop the id in `_execute_handler`'s callback.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from pygls.protocol import JsonRPCProtocol
from pygls.server import JsonRPCServer
from pygls.workspace import TextDocument, Workspace


def send_data(protocol: JsonRPCProtocol, message: dict[str, Any]) -> None:
    """Write one JSON-RPC message as it is (pygls serialises and frames it)."""
    protocol._send_data(message)


def send_error(protocol: JsonRPCProtocol, msg_id: Any, error: Any) -> None:
    """Answer request `msg_id` with a `ResponseError`."""
    protocol._send_response(msg_id, error=error)


def report_server_error(server: JsonRPCServer, error: Exception, source: Any) -> None:
    server._report_server_error(error, source)


def install_stop_event(server: JsonRPCServer) -> threading.Event:
    """The event pygls's `shutdown()` (the `exit` notification) sets to stop the reader loop."""
    server._stop_event = stop = threading.Event()
    return stop


def keep_tcp_server(server: JsonRPCServer, tcp: Any) -> None:
    """Let pygls's `shutdown()` close the TCP listener, as after `start_tcp`."""
    server._server = tcp


class DocumentFactory(Workspace):
    """A pygls workspace whose documents `make` builds (pygls calls `_create_text_document` for
    every `didOpen`), with the workspace's sync kind and position codec."""

    def make(
        self, uri: str, source: str | None, version: int | None, language_id: str | None, sync_kind: Any, codec: Any
    ) -> TextDocument:
        raise NotImplementedError

    def _create_text_document(
        self, doc_uri: str, source: str | None = None, version: int | None = None, language_id: str | None = None
    ) -> TextDocument:
        return self.make(doc_uri, source, version, language_id, self._sync_kind, self._position_codec)


class ForgetNotificationFutures(JsonRPCProtocol):
    """A protocol that drops the future of each handled message once it is done (see above)."""

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Callable[[Future[Any]], Any],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        def done(future: Future[Any]) -> None:
            try:
                callback(future)
            finally:
                if self._request_futures.get(msg_id) is future:
                    del self._request_futures[msg_id]

        super()._execute_handler(msg_id, handler, done, args, kwargs)
