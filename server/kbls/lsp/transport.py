"""pygls served over our reader (`kbls.jsonrpc`) instead of its own: stdio, `--tcp` and each
connection of the per-user daemon.

Every frame is handed to pygls's protocol; what it cannot take is answered with a JSON-RPC error
(a body that is not JSON: a parse error; not a JSON-RPC 2.0 message: an invalid request), never
dropped, so no client waits for an answer that never comes. The upstream home of the fix is
`pygls/io_.py` (`run_async`/`run`), see docs/architecture.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.server import JsonRPCServer

from kbls import jsonrpc
from kbls.jsonrpc import INVALID_REQUEST, PARSE_ERROR, ByteStream, FrameReader, Malformed, SocketStream, StdinStream
from kbls.lsp import pygls_compat, tcp_peer

log = logging.getLogger(__name__)


def _reply_error(server: JsonRPCServer, msg_id: Any, code: int, message: str) -> None:
    pygls_compat.send_data(server.protocol, jsonrpc.error(msg_id, code, message))


def dispatch(server: JsonRPCServer, body: bytes) -> None:
    """Hand one frame body to pygls's protocol, answering what it cannot take with a JSON-RPC error."""
    try:
        raw = json.loads(body)
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError
        log.warning("a frame body is not JSON (%s)", error)
        _reply_error(server, None, PARSE_ERROR, f"Parse error: the body is not JSON ({error})")
        return
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0":
        log.warning("a frame is not a JSON-RPC 2.0 message")
        msg_id = raw.get("id") if isinstance(raw, dict) else None
        _reply_error(server, msg_id, INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message")
        return
    try:
        message = server.protocol.structure_message(raw)
    except JsonRpcException as error:  # pygls could not type it (it logged why)
        if "id" in raw and "method" in raw:
            _reply_error(server, raw["id"], error.code, error.message)
        return
    try:
        server.protocol.handle_message(message)
    except Exception as error:  # a bug in a handler: pygls's loop logs these too, and carries on
        log.exception("unable to handle message")
        pygls_compat.report_server_error(server, error, JsonRpcException)


async def read_loop(server: JsonRPCServer, stream: ByteStream, stop: threading.Event) -> None:
    """Read and dispatch frames until the stream ends or the server is shut down."""
    frames = FrameReader(stream)
    while not stop.is_set():
        frame = await frames.read()
        if frame is None:
            log.info("the client's stream has ended")
            return
        if isinstance(frame, Malformed):
            log.warning("malformed frame: %s; answered with a parse error", frame.reason)
            _reply_error(server, None, PARSE_ERROR, f"Parse error: {frame.reason}")
            continue
        dispatch(server, frame)


def serve_stdio(server: JsonRPCServer, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """What `server.start_io(stdin, stdout)` does, with this module's reader."""
    # `server.shutdown()` (the `exit` notification) stops the loop through this event.
    stop = pygls_compat.install_stop_event(server)
    stream = StdinStream(stdin)
    server.protocol.set_writer(StdoutWriter(stdout))
    try:
        asyncio.run(read_loop(server, stream, stop))
    except BrokenPipeError:
        log.error("the connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        stream.close()
        server.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated


def serve_tcp(server: JsonRPCServer, host: str, port: int) -> None:
    """What `server.start_tcp(host, port)` does, with this module's reader, for this user only
    (`kbls.lsp.tcp_peer`)."""
    stop = pygls_compat.install_stop_event(server)

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        if not tcp_peer.same_user(peer, writer.get_extra_info("sockname")):
            log.warning("refused a TCP connection from %s: not this user on this machine", peer)
            writer.close()
            return
        log.debug("a client connected")
        server.protocol.set_writer(writer)
        await read_loop(server, SocketStream(reader), stop)
        server.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated

    async def listen() -> None:
        tcp = await asyncio.start_server(connection, host, port)
        pygls_compat.keep_tcp_server(server, tcp)
        log.info("serving on %s", ", ".join(str(sock.getsockname()) for sock in tcp.sockets))
        async with tcp:
            await tcp.serve_forever()

    try:
        asyncio.run(listen())
    except asyncio.CancelledError:
        log.debug("the server was cancelled")
