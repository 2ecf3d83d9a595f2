"""JSON-RPC over LSP's base protocol, written once for the language server, the relay and the
CLI's and `kbls mcp`'s client of the per-user daemon: frames out (`encode`), frames in
(`FrameReader`, async; `read_blocking`, the same reader on a blocking file), the error replies
(codes from lsprotocol) and one frame cap (`kbls.limits.MAX_FRAME_BYTES`).

pygls 2.x (`pygls.io_.run_async`) matches each header line against
`^Content-Length: (\\d+)\\r\\n$` exactly: a header written `content-length:` (header names are
case-insensitive), `Content-Length:  N` (two spaces) or with LF-only line ends is dropped, the
next frame's header is swallowed and the server never answers again; `Content-Length:
99999999999999` makes it allocate that much (MemoryError, the process dies). Here:

- header names are case-insensitive, whitespace around names and values is tolerated, lines may
  end in LF alone, stray blank lines between frames are skipped;
- a body over the cap, a missing or non-numeric `Content-Length` or a header line over
  `MAX_HEADER_LINE_BYTES` is `Malformed` (the server answers a parse error, -32700, id null);
- after a bad header the reader resynchronises on the next line that ends in a
  `Content-Length: N` header (a JSON body never contains a raw newline inside a string, so such a
  line is a frame start, even glued to the end of a broken body);
- the stream ending inside a frame is the end of the stream, logged in one line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol, TypeVar

from kbls.limits import MAX_FRAME_BYTES

log = logging.getLogger(__name__)
T = TypeVar("T")

# Error codes, read from lsprotocol on first use (`__getattr__`): importing it takes about a
# second on a busy machine, and the CLI's client, which sends none, must start fast.
PARSE_ERROR: int
INVALID_REQUEST: int
#: a valid request that cannot be answered now (a store being rebuilt, a root being reopened, a lost daemon)
REQUEST_FAILED: int
_CODES = {
    "PARSE_ERROR": ("ErrorCodes", "ParseError"),
    "INVALID_REQUEST": ("ErrorCodes", "InvalidRequest"),
    "REQUEST_FAILED": ("LSPErrorCodes", "RequestFailed"),
}
#: a header line longer than this is malformed (real ones are under 100 bytes)
MAX_HEADER_LINE_BYTES = 8 * 1024
#: header lines in one frame (the spec defines two)
MAX_HEADER_LINES = 32
#: a line that ends in a Content-Length header: where a frame starts when resynchronising
_FRAME_START = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)[ \t]*$", re.IGNORECASE)
#: a header name is an RFC 7230 token: `xyz"}Content-Length` is the tail of a broken body, not a name
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: bytes of an unfinished line kept while resynchronising, so a header split between reads is seen
_CARRY = 64


def __getattr__(name: str) -> int:
    if name not in _CODES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from lsprotocol import types

    enum, member = _CODES[name]
    return int(getattr(getattr(types, enum), member))


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def encode(message: dict[str, Any]) -> bytes:
    """One message as a frame."""
    return frame(json.dumps(message, separators=(",", ":")).encode())


def error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    """An error response to request `msg_id` (None: to a frame that could not be read)."""
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def json_object(body: bytes) -> dict[str, Any] | None:
    """A frame body as a JSON object; None for anything else."""
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class ByteStream(Protocol):
    """Where frames come from: lines (at most `limit` bytes) and exact reads, short only at EOF."""

    async def readline(self, limit: int) -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


class StdinStream:
    """A binary stdin read on one dedicated thread, so the event loop never blocks on it (pygls
    reads it on the handlers' pool, where busy handlers can delay the next `$/cancelRequest`)."""

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
    """An asyncio stream (a socket or a child's pipe) with the same two reads."""

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


class FileStream:
    """A blocking binary file (a socket's `makefile("rb")`) as a `ByteStream` that never suspends."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file

    async def readline(self, limit: int) -> bytes:
        return self._file.readline(limit)

    async def readexactly(self, n: int) -> bytes:
        return self._file.read(n)


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
                    log.warning("the stream ended inside a frame header; stopping")
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
            return self._malformed(f"a frame of {size} bytes, over the cap (at most {self._max_body})", b"")
        body = await self._stream.readexactly(size)
        if len(body) < size:
            log.warning("the stream ended %d bytes into a %d-byte frame; stopping", len(body), size)
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
                log.warning("the stream ended while looking for the next frame; stopping")
                return None


def read_blocking(frames: FrameReader) -> bytes | Malformed | None:
    """`frames.read()` on a `FileStream`, without an event loop (the stream's errors propagate)."""
    return _run(frames.read())


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]  # StopIteration.value is untyped
    coroutine.close()
    raise RuntimeError("the stream of a blocking read suspended")


def _shown(raw: bytes, limit: int = 80) -> str:
    text = raw.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + "...")
