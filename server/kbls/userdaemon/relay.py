"""`kbls serve` as a thin relay: the editor's stdio <-> the per-user daemon's socket.

The relay reads whole frames both ways (`kbls.jsonrpc`) and forwards them unchanged; it
parses each body only to keep what a new daemon would need (`kbls.userdaemon.session`). When the daemon's connection ends
while the editor is still there (the daemon was killed, crashed or restarted), the relay:

1. answers every request still waiting with `RequestFailed` (-32803, "try again"), so no
   editor request hangs, and ends every work-done progress the daemon had begun; only the
   editor's `initialize` is not failed (an editor gives up on a server whose `initialize`
   failed) but sent again, in step 3;
2. reconnects, starting a daemon under the spawn lock if none is running (five relays losing
   their daemon start one), or, if no daemon can be reached (or it was lost three times within
   30 s), starts `kbls serve --standalone` as a child and uses it the same way from then on
   (a standalone server lost three times within 30 s ends the relay, status 1: restarting one
   that dies at once would spawn processes without end);
3. replays `initialize` (its answer is dropped: the editor has one; or, when the editor's was
   still waiting, under the editor's id, and answered) with the workspace folders as they are
   now (every `didChangeWorkspaceFolders` is applied to the saved params) and `initialized`,
   opens the editor's open documents again with the text it has (unsaved changes included),
   then forwards again.

Answers of the editor to requests of a previous daemon (progress tokens) are dropped. The relay
ends when the editor closes stdin, or after `exit` once the daemon closed the connection (exit
status 0 after `shutdown`, else 1, as the LSP asks).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import socket
import sys
import time
from dataclasses import dataclass
from typing import Any, BinaryIO

from kbls.jsonrpc import PARSE_ERROR, FrameReader, Malformed, SocketStream, StdinStream, encode, error, frame, json_object
from kbls.userdaemon import spawn
from kbls.userdaemon.paths import DaemonPaths
from kbls.userdaemon.session import Session, message_id

log = logging.getLogger(__name__)

#: this many losses within FLAP_WINDOW seconds: the relay stops trying the daemon
FLAP_LOSSES = 3
FLAP_WINDOW = 30.0


@dataclass
class Backend:
    """The far end: the daemon's socket, or a standalone `kbls serve` child's pipes."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    kind: str
    process: asyncio.subprocess.Process | None = None


class Relay:
    """Relays one editor session (see the module docstring)."""

    def __init__(self, paths: DaemonPaths, stdin: BinaryIO, stdout: BinaryIO) -> None:
        self.paths = paths
        self.stdin = stdin
        self.stdout = stdout
        self.session = Session()
        self.backend: Backend | None = None
        self._ready = asyncio.Event()
        self._ids = itertools.count(1)
        self._closing = False
        #: when the backend was lost lately: a daemon that keeps dying is given up for a standalone
        #: server, a standalone server that keeps dying ends the relay (`gave_up`)
        self._losses: list[float] = []
        self.gave_up = False

    async def run(self, sock: socket.socket) -> int:
        reader, writer = await asyncio.open_unix_connection(sock=sock)
        self.backend = Backend(reader, writer, "daemon")
        self._ready.set()
        pump = asyncio.create_task(self._from_backend())
        stream = StdinStream(self.stdin)
        editor = asyncio.create_task(self._from_editor(stream))
        try:
            # The editor closing stdin ends the relay; so does the backend closing after `exit`
            # (an editor may wait for the server process to exit before closing its end).
            await asyncio.wait({editor, pump}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._closing = True
            stream.close()
            await self._close_backend()
            for task in (editor, pump):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, ConnectionError, OSError):
                    await task
        if self.gave_up:
            return 1
        return 0 if self.session.shutdown or not self.session.exiting else 1

    # -- editor -> backend -----------------------------------------------------------------
    async def _from_editor(self, stream: StdinStream) -> None:
        frames = FrameReader(stream)
        while True:
            body = await frames.read()
            if body is None:
                log.info("the editor closed its end")
                return
            if isinstance(body, Malformed):
                log.warning("malformed frame from the editor: %s", body.reason)
                self._to_editor(encode(error(None, PARSE_ERROR, f"Parse error: {body.reason}")))
                continue
            message = json_object(body)
            if message is not None and not self.session.from_editor(message):
                continue
            await self._send(body, message)

    async def _send(self, body: bytes, message: dict[str, Any] | None) -> None:
        """Write to the backend; if it died meanwhile, write to its successor.

        A request counts as pending from before its write, so a reconnect that happens while it
        is being written answers it (RequestFailed); it is then not sent again.
        """
        msg_id = message_id(message.get("id")) if message is not None and "method" in message else None
        while True:
            await self._ready.wait()
            backend = self.backend
            assert backend is not None
            if message is not None:
                self.session.sent(message)
            try:
                backend.writer.write(frame(body))
                await backend.writer.drain()
            except (ConnectionError, OSError) as exc:
                log.info("writing to the %s failed (%s); waiting for a new one", backend.kind, exc)
                if self.backend is backend:
                    self._ready.clear()
                if msg_id is not None:
                    if msg_id not in self.session.pending:
                        return  # a reconnect meanwhile answered it
                    del self.session.pending[msg_id]
                await asyncio.sleep(0.05)
                continue
            return

    # -- backend -> editor -----------------------------------------------------------------
    async def _from_backend(self) -> None:
        while True:
            backend = self.backend
            assert backend is not None
            frames = FrameReader(SocketStream(backend.reader))
            while True:
                try:
                    body = await frames.read()
                except (ConnectionError, OSError):
                    body = None
                if body is None or isinstance(body, Malformed):
                    break
                message = json_object(body)
                if message is not None and not self.session.from_backend(message):
                    continue
                self._to_editor(frame(body))
            if self._closing or self.session.exiting:
                log.info("the %s closed the connection after exit", backend.kind)
                self._closing = True
                return
            log.warning("lost the %s; reconnecting", backend.kind)
            if not await self._reconnect(backend):
                return

    async def _reconnect(self, lost: Backend) -> bool:
        """A new backend in place of `lost`; False when the relay gives up (it then ends)."""
        self._ready.clear()
        for message in self.session.lost():
            self._to_editor(encode(message))
        await _close(lost)
        now = time.monotonic()
        self._losses = [t for t in self._losses if now - t < FLAP_WINDOW] + [now]
        flapping = len(self._losses) >= FLAP_LOSSES
        if flapping and lost.kind != "daemon":
            # Restarting a server that dies at once would spawn processes without end.
            log.error("the %s stopped %d times in %.0f s: giving up", lost.kind, len(self._losses), FLAP_WINDOW)
            self.gave_up = True
            return False
        if flapping:
            log.warning("lost the daemon %d times in %.0f s: not trying it again", len(self._losses), FLAP_WINDOW)
            self._losses = []  # the standalone server gets chances of its own
        else:
            await asyncio.sleep(0.1 * len(self._losses))
        self.backend = await self._new_backend(daemon=not flapping and lost.kind == "daemon")
        await self._replay()
        self._ready.set()
        return True

    async def _new_backend(self, daemon: bool) -> Backend:
        loop = asyncio.get_running_loop()
        sock = await loop.run_in_executor(None, spawn.ensure_daemon, self.paths) if daemon else None
        if sock is not None:
            reader, writer = await asyncio.open_unix_connection(sock=sock)
            log.info("reconnected to the kbls daemon")
            return Backend(reader, writer, "daemon")
        log.warning("no kbls daemon can be reached: serving this editor from a kbls serve --standalone")
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "kbls", "serve", "--standalone",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )
        assert process.stdin is not None and process.stdout is not None
        return Backend(process.stdout, process.stdin, "standalone server", process)

    async def _replay(self) -> None:
        backend = self.backend
        assert backend is not None
        if self.session.initialize is None:
            return
        msg_id: int | str | None = self.session.unanswered_initialize
        self.session.unanswered_initialize = None
        if msg_id is not None:  # the editor still waits for this answer: it is forwarded
            self.session.pending[msg_id] = "initialize"
        else:
            msg_id = f"kbls-relay-{next(self._ids)}"
            self.session.own_ids.add(msg_id)
        out = [encode({"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": self.session.initialize})]
        if self.session.initialized:
            out.append(encode({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        documents = self.session.documents.reopen()
        out += [encode(message) for message in documents]
        log.info("replayed initialize and %d open document(s) (%d bytes)", len(documents), sum(map(len, out)))
        try:
            backend.writer.write(b"".join(out))
            await backend.writer.drain()
        except (ConnectionError, OSError) as exc:
            log.warning("replaying initialize failed: %s", exc)

    def _to_editor(self, data: bytes) -> None:
        try:
            self.stdout.write(data)
            self.stdout.flush()
        except (BrokenPipeError, ValueError):
            self._closing = True

    async def _close_backend(self) -> None:
        if self.backend is not None:
            await _close(self.backend)


async def _close(backend: Backend) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        backend.writer.close()
    if backend.process is not None:
        try:
            await asyncio.wait_for(backend.process.wait(), 5)
        except asyncio.TimeoutError:
            backend.process.kill()


def relay(paths: DaemonPaths, sock: socket.socket) -> int:
    """Relay this process's stdio to the daemon at the other end of `sock` until the editor leaves."""
    stdout = sys.stdout.buffer
    try:
        code = asyncio.run(Relay(paths, sys.stdin.buffer, stdout).run(sock))
    except KeyboardInterrupt:
        code = 0
    # The stdin thread may still be blocked in a read the editor never ends; Python's exit would
    # join it. Nothing is left to flush but the log.
    logging.shutdown()
    with contextlib.suppress(OSError, ValueError):
        stdout.flush()
    os._exit(code)
