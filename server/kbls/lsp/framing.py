"""LSP base-protocol framing that follows the spec, in place of pygls's reader loop.

pygls 2.x (`pygls.io_.run_async`) matches each header line against
`^Content-Length: (\\d+)\\r\\n$` exactly: a header written `content-length:` (header names are
case-insensitive), `Content-Length:  N` (two spaces) or with LF-only line ends is dropped, the
next frame's header is swallowed and the server never answers again; `Content-Length:
99999999999999` makes it allocate that much (MemoryError, the process dies). Here:

- header names are case-insensitive, whitespace around names and values is tolerated, lines may
  end in LF alone, stray blank lines between frames are skipped;
- a body over `MAX_FRAME_BYTES` (64 MiB, docs/protocol.md), a missing or non-numeric
  `Content-Length`, a header line over `MAX_HEADER_LINE_BYTES` or a body that is not JSON is
  answered with a JSON-RPC parse error (-32700, id null) and logged; a JSON value that is not a
  JSON-RPC message gets an invalid-request error (-32600);
- after a bad header the reader resynchronises on the next line that ends in a
  `Content-Length: N` header (a JSON body never contains a raw newline inside a string, so such a
  line is a frame start, even glued to the end of a broken body);
- the stream ending inside a frame stops the server with one logged line, never a traceback.

Stdin is read on a thread of its own (pygls reads it on the handlers' pool, where busy handlers
can delay the next `$/cancelRequest`). The same loop serves `--tcp`. The fix is general: its
upstream home is `pygls/io_.py` (`run_async`/`run`), see docs/architecture.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.server import JsonRPCServer

from kbls.limits import MAX_FRAME_BYTES
from kbls.lsp import pygls_compat, tcp_peer

log = logging.getLogger(__name__)

#: a header line longer than this is malformed (real ones are under 100 bytes)
MAX_HEADER_LINE_BYTES = 8 * 1024
#: header lines in one frame (the spec defines two)
MAX_HEADER_LINES = 32
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
#: a line that ends in a Content-Length header: where a frame starts when resynchronising
_FRAME_START = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)[ \t]*$", re.IGNORECASE)
#: a header name is an RFC 7230 token: `xyz"}Content-Length` is the tail of a broken body, not a name
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: bytes of an unfinished line kept while resynchronising, so a header split between reads is seen
_CARRY = 64


class ByteStream(Protocol):
    """Where frames come from: lines (at most `limit` bytes) and exact reads, short only at EOF."""

    async def readline(self, limit: int) -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


class StdinStream:
    """A binary stdin read on one dedicated thread, so the event loop never blocks on it."""

    def __init__(self, stdin: BinaryIO) -> None:
        self._stdin = stdin
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kbls-stdin")

    async def readline(self, limit: int) -> bytes:
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._stdin.readline, limit)

    async def readexactly(self, n: int) -> bytes:
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._stdin.read, n)

    def close(self) -> None:
        self._thread.shutdown(wait=False)


class SocketStream:
    """An asyncio stream (the `--tcp` connection) with the same two reads."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def readline(self, limit: int) -> bytes:
        try:
            return await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:
            return end.partial
        except asyncio.LimitOverrunError:
            return await self._reader.read(limit)  # the start of an over-long line

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self._reader.readexactly(n)
        except asyncio.IncompleteReadError as end:
            return end.partial


@dataclass(frozen=True)
class Malformed:
    """A frame that could not be read: answered with a parse error, then the reader resynchronises."""

    reason: str


class FrameReader:
    """Reads one frame body at a time from a `ByteStream`; `None` when the stream has ended."""

    def __init__(self, stream: ByteStream, max_body: int = MAX_FRAME_BYTES) -> None:
        self._stream = stream
        self._max_body = max_body
        #: after a malformed frame: skip to the next frame start, looking at this line first
        self._resync_from: bytes | None = None

    async def read(self) -> bytes | Malformed | None:
        headers: dict[bytes, bytes] = {}
        lines = 0
        if self._resync_from is not None:
            length = await self._resynchronise(self._resync_from)
            self._resync_from = None
            if length is None:
                return None
            headers[b"content-length"] = length
        while True:
            line = await self._stream.readline(MAX_HEADER_LINE_BYTES)
            if not line:
                if headers:
                    log.warning("the client's stream ended inside a frame header; stopping")
                return None
            text = line.rstrip(b"\r\n")
            if not line.endswith(b"\n") and len(line) >= MAX_HEADER_LINE_BYTES:
                return self._malformed(f"a header line longer than {MAX_HEADER_LINE_BYTES} bytes", line)
            if not text.strip():
                if headers:
                    break
                continue  # a stray blank line between frames
            lines += 1
            name, colon, value = text.partition(b":")
            if not colon or not _TOKEN.fullmatch(name.strip()) or lines > MAX_HEADER_LINES:
                return self._malformed(f"not a header line: {_shown(text)}", line)
            headers[name.strip().lower()] = value.strip()
        declared = headers.get(b"content-length")
        if declared is None or not declared.isdigit():
            what = "no Content-Length header" if declared is None else f"Content-Length {_shown(declared)}"
            return self._malformed(what, b"")
        size = int(declared)
        if size > self._max_body:
            return self._malformed(f"a frame of {size} bytes, over the {self._max_body}-byte cap", b"")
        body = await self._stream.readexactly(size)
        if len(body) < size:
            log.warning("the client's stream ended %d bytes into a %d-byte frame; stopping", len(body), size)
            return None
        return body

    def _malformed(self, reason: str, line: bytes) -> Malformed:
        self._resync_from = line
        return Malformed(reason)

    async def _resynchronise(self, line: bytes) -> bytes | None:
        """Skip lines until one ends in a Content-Length header; its value, or None at the end."""
        skipped = 0
        carry = b""
        while True:
            if line.endswith(b"\n"):
                match = _FRAME_START.search(carry + line.rstrip(b"\r\n"))
                if match:
                    if skipped:
                        log.warning("skipped %d bytes to the next frame", skipped)
                    return match.group(1)
                carry = b""
            else:
                carry = (carry + line)[-_CARRY:]
            skipped += len(line)
            line = await self._stream.readline(MAX_HEADER_LINE_BYTES)
            if not line:
                log.warning("the client's stream ended while looking for the next frame; stopping")
                return None


def _shown(raw: bytes, limit: int = 80) -> str:
    text = raw.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _reply_error(server: JsonRPCServer, msg_id: Any, code: int, message: str) -> None:
    pygls_compat.send_data(server.protocol, {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


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
