"""`kbls mcp --http HOST:PORT`: the same MCP tools over the SDK's streamable HTTP transport.

For an agent that cannot spawn a process beside the notes (a server, a container, a team's
agent host). A port is open to every local user, and beyond loopback to the network, while the
notes are one person's or one team's: every HTTP request must carry `Authorization: Bearer
<token>`, the token read from a file that only its owner may read (as ssh does with a key). A
request without it is refused with 401 before it reaches the MCP session.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import stat
import sys
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from kbls.errors import ConfigError
from kbls.mcp.backend import NotesBackend

log = logging.getLogger(__name__)

# The ASGI shapes (as starlette.types spells them).
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: shorter tokens can be guessed by a local user at loopback speed.
MIN_TOKEN_CHARS = 16
MAX_TOKEN_BYTES = 4096
MAKE_ONE = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))' > FILE && chmod 600 FILE"


def parse_address(value: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:PORT` for IPv6) as a host and a port number."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--http expects HOST:PORT (e.g. 127.0.0.1:8765), not {value!r}")
    return host.strip("[]"), int(port)


def read_token(path: Path) -> str:
    """The bearer token in `path`, refused when the file is not its owner's alone or too short.

    :raises ConfigError: the file is missing, not a regular file, readable by group or others,
        empty or shorter than `MIN_TOKEN_CHARS`.
    """
    where = f"--token-file {path}"
    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read it ({exc.strerror}); make one: {MAKE_ONE}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{where}: not a regular file")
    if os.name == "posix" and info.st_mode & 0o077:
        raise ConfigError(
            f"{where}: other users may read it (mode {stat.S_IMODE(info.st_mode):04o}); `chmod 600 {path}`"
        )
    token = path.read_bytes()[:MAX_TOKEN_BYTES].decode("utf-8", "replace").strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"{where}: the token is shorter than {MIN_TOKEN_CHARS} characters; make one: {MAKE_ONE}")
    return token


class BearerGate:
    """An ASGI wrapper that passes on only HTTP requests carrying the token (compared in constant
    time); the lifespan and anything else that is not a request go through untouched."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and not self._carries_token(scope):
            await _refuse(scope, send)
            return
        await self.app(scope, receive, send)

    def _carries_token(self, scope: Scope) -> bool:
        given = next((value for name, value in scope.get("headers", ()) if name == b"authorization"), b"")
        return hmac.compare_digest(given, self.expected)


async def _refuse(scope: Scope, send: Send) -> None:
    client = scope.get("client") or ("?", 0)
    log.warning("refused an MCP request from %s:%s without the bearer token", *client)
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = json.dumps(
        {"error": "invalid_token", "error_description": "send Authorization: Bearer <the token in kbls mcp's --token-file>"}
    ).encode()
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"www-authenticate", b'Bearer realm="kbls", error="invalid_token"'),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def serve_http(backend: NotesBackend, fixed_roots: Sequence[Path], address: str, token_file: Path) -> int:
    """Serve the MCP tools on `address` until interrupted; every request needs the file's token.

    :raises ConfigError: a bad address or token file (checked before the port is opened).
    """
    import uvicorn

    from kbls.mcp.server import build_server

    host, port = parse_address(address)
    token = read_token(token_file)
    server = build_server(backend, fixed_roots)
    app: Any = BearerGate(server.streamable_http_app(host=host), token)
    # stdout and stderr carry no protocol here: say where to connect.
    print(f"kbls mcp: serving http://{host}:{port}/mcp (bearer token from {token_file})", file=sys.stderr, flush=True)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")
    finally:
        backend.close()
    return 0
