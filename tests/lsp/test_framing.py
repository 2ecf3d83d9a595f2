"""Issue 14 item 4: LSP framing that follows the spec (kbls.lsp.framing), over the real `kbls serve`.

Each header variant a client may write (header names in any case, extra whitespace, LF-only line
ends, Content-Type first) is followed in the same write by a well-formed request: both must be
answered (pygls's own reader dropped the variant and swallowed the next header, so the server
never answered again). Each malformed frame (oversize, no or a bad length, a body that is not
JSON, a garbage or over-long header line) must get a JSON-RPC parse error, after which the next
request is answered; no traceback on stderr. A stream ending inside a frame stops the server
cleanly. `--tcp` and the relay to the per-user daemon read frames the same way. The reader's
resynchronisation is also checked on in-memory streams.
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from tests.support.raw_stdio import RawStdio, frame, initialize_params, read_message
from tests.support.user_daemon import daemon_pids

from kbls.jsonrpc import MAX_HEADER_LINE_BYTES, FrameReader, Malformed


def _status(msg_id: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "kb/status", "params": {}}


def _answers(server: RawStdio, wanted: set[object], deadline: float = 60.0) -> dict[object, list[dict[str, Any]]]:
    """The responses, by id (null included), until each id in `wanted` has one."""
    got: dict[object, list[dict[str, Any]]] = {}
    while not wanted <= got.keys():
        message = server.answer_any(deadline)
        got.setdefault(message.get("id"), []).append(message)
    return got


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawStdio]:
    """A `kbls serve` with no workspace folder (nothing to index), initialized."""
    s = RawStdio(tmp_path, log_level="INFO")
    try:
        s.initialize(None)
        yield s
    finally:
        s.close()


CONTENT_TYPE = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
VARIANTS = {
    "lower-case name": b"content-length: %d\r\n\r\n",
    "two spaces": b"Content-Length:  %d\r\n\r\n",
    "LF-only line ends": b"Content-Length: %d\n\n",
    "upper case, no space, Content-Type after": b"CONTENT-LENGTH:%d\r\n" + CONTENT_TYPE + b"\r\n",
    "Content-Type first": CONTENT_TYPE + b"Content-Length: %d\r\n\r\n",
    "tab and trailing space": b"Content-Length:\t%d \r\n\r\n",
    "a blank line before the header": b"\r\nContent-Length: %d\r\n\r\n",
}


@pytest.mark.parametrize("header", VARIANTS.values(), ids=VARIANTS.keys())
def test_each_header_variant_and_the_next_request_are_answered(server: RawStdio, header: bytes) -> None:
    server.write(frame(_status("variant"), header) + frame(_status("after")))
    got = _answers(server, {"variant", "after"})
    for msg_id in ("variant", "after"):
        (answer,) = got[msg_id]
        assert answer["result"]["state"] in ("loading", "indexing", "ready"), answer
    assert None not in got, got[None]  # no parse error for a well-formed variant


MALFORMED = {
    "oversize": b"Content-Length: 99999999999999\r\n\r\n",
    "body not JSON": b"Content-Length: 5\r\n\r\nhello",
    "no Content-Length": CONTENT_TYPE + b'\r\n{"jsonrpc": "2.0", "id": "lost", "method": "kb/status"}',
    "non-numeric length": b"Content-Length: twelve\r\n\r\n{}",
    "negative length": b"Content-Length: -5\r\n\r\n",
    "garbage line": b"hello world\r\n",
    "over-long header line": b"X-Padding: " + b"a" * (4 * MAX_HEADER_LINE_BYTES) + b"\r\n\r\n",
}


@pytest.mark.parametrize("bad", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_frame_gets_a_parse_error_and_the_next_request_an_answer(server: RawStdio, bad: bytes) -> None:
    server.write(bad + frame(_status("after")))
    got = _answers(server, {None, "after"})
    assert [e["error"]["code"] for e in got[None]] == [-32700], got[None]
    (after,) = got["after"]
    assert "result" in after, after
    assert server.proc.poll() is None
    assert "Traceback" not in server.stderr()
    assert "malformed frame" in server.log() or "not JSON" in server.log()


@pytest.mark.parametrize("body", [b"[]", b"42", b'{"id": "no-version", "method": "kb/status"}'])
def test_json_that_is_not_a_json_rpc_message_gets_invalid_request(server: RawStdio, body: bytes) -> None:
    server.write(b"Content-Length: %d\r\n\r\n" % len(body) + body + frame(_status("after")))
    wanted = "no-version" if b"no-version" in body else None
    got = _answers(server, {wanted, "after"})
    assert [e["error"]["code"] for e in got[wanted]] == [-32600], got[wanted]
    assert "result" in got["after"][0]


def test_a_stream_ending_inside_a_frame_stops_the_server_cleanly(server: RawStdio) -> None:
    cut = b'{"jsonrpc": "2.0", "id": "cut'
    server.write(b"Content-Length: 100\r\n\r\n" + cut)
    server.close_input()
    assert server.proc.wait(30) == 0
    assert "Traceback" not in server.stderr()
    assert f"ended {len(cut)} bytes into a 100-byte frame" in server.log()


# -- the reader alone, on in-memory streams ------------------------------------------------------
class BytesStream:
    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    async def readline(self, limit: int) -> bytes:
        return self._data.readline(limit)

    async def readexactly(self, n: int) -> bytes:
        return self._data.read(n)


def _read_all(data: bytes, max_body: int = 1000) -> list[bytes | Malformed]:
    async def go() -> list[bytes | Malformed]:
        reader = FrameReader(BytesStream(data), max_body)
        frames: list[bytes | Malformed] = []
        while (frame_or_end := await reader.read()) is not None:
            frames.append(frame_or_end)
        return frames

    return asyncio.run(go())


def test_the_reader_finds_a_frame_start_split_between_two_reads() -> None:
    # an oversize frame whose "body" is one long line; the next header is glued to its end and
    # falls across the boundary of two line reads
    glued = b"x" * (MAX_HEADER_LINE_BYTES - 7) + b"Content-Length: 2\r\n\r\n{}"
    frames = _read_all(b"Content-Length: 5000\r\n\r\n" + glued)
    assert isinstance(frames[0], Malformed) and "5000 bytes" in frames[0].reason
    assert frames[1:] == [b"{}"]


def test_the_tail_of_a_broken_body_is_not_taken_for_a_header() -> None:
    # a length one byte short leaves `}` glued to the next header: that line is not a header name
    frames = _read_all(b'Content-Length: 2\r\n\r\n{"}Content-Length: 2\r\n\r\n[]')
    assert frames[0] == b'{"'
    assert isinstance(frames[1], Malformed)
    assert frames[2:] == [b"[]"]


@pytest.mark.parametrize(
    "many", [b"".join(b"X-%d: y\r\n" % i for i in range(100)), b"X: y\r\n" * 100], ids=["distinct names", "one name"]
)
def test_header_lines_without_a_blank_line_end_are_cut_off(many: bytes) -> None:
    frames = _read_all(many + b"Content-Length: 2\r\n\r\n{}")
    assert isinstance(frames[0], Malformed)
    assert frames[1:] == [b"{}"]


def _response(replies: IO[bytes]) -> dict[str, Any]:
    """The next response on a socket (notifications skipped; the server sends no requests here)."""
    while True:
        message = read_message(replies)
        assert message is not None, "the server closed the connection"
        if "method" not in message:
            return message


def test_a_tcp_client_gets_the_same_framing(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a free loopback port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "kbls", "serve", "--tcp", f"127.0.0.1:{port}", "--log-file", str(tmp_path / "tcp.log")],
        env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache")), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:  # the server needs a moment to listen
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                assert time.monotonic() < deadline, "kbls serve --tcp is not listening"
                time.sleep(0.1)
        with connection, connection.makefile("rb") as replies:
            initialize = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": initialize_params(None)}
            connection.sendall(
                frame(initialize, b"content-length:%d\n\n") + MALFORMED["oversize"] + frame(_status("after"))
            )
            answers = [_response(replies) for _ in range(3)]
            assert [a.get("id") for a in answers] == ["init", None, "after"], answers
            assert answers[1]["error"]["code"] == -32700
            connection.sendall(frame({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"}))
            assert _response(replies).get("id") == "bye"
            connection.sendall(frame({"jsonrpc": "2.0", "method": "exit"}))
    finally:
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
        stderr = server.communicate()[1] if server.stderr else b""
    assert b"Traceback" not in stderr


def test_the_relay_to_the_per_user_daemon_reads_frames_the_same_way(tmp_path: Path) -> None:
    # `kbls serve` as editors run it by default: a relay that frames with kbls.lsp.framing too
    runtime = Path(tempfile.mkdtemp(prefix="kbls-rt-", dir="/tmp"))  # a socket path is short
    os.chmod(runtime, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), KBLS_DAEMON_IDLE_MINUTES="0.5", OMP_NUM_THREADS="1")
    relay = RawStdio(tmp_path, log_level="INFO", env=env, daemon=True)
    try:
        relay.initialize(None)
        relay.write(frame(_status("variant"), VARIANTS["lower-case name"]) + MALFORMED["oversize"] + frame(_status("after")))
        got = _answers(relay, {"variant", None, "after"})
        assert [e["error"]["code"] for e in got[None]] == [-32700], got[None]
        assert all("result" in got[i][0] for i in ("variant", "after")), got
        assert daemon_pids(runtime), "the relay served without a per-user daemon"
        assert "Traceback" not in relay.stderr()
    finally:
        relay.close()
        for pid in daemon_pids(runtime):
            os.kill(pid, signal.SIGTERM)
        shutil.rmtree(runtime, ignore_errors=True)
