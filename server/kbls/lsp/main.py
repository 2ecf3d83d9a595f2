"""`kbls serve --standalone` and `kbls serve --tcp`: the shared host (`kbls.daemon.host`) in this
process with one connection, over stdio or one TCP client at a time."""

from __future__ import annotations

import logging
import os
import sys

from kbls import __version__
from kbls.daemon.host import SharedDaemon
from kbls.logsetup import configure_logging
from kbls.lsp import transport
from kbls.lsp.server import make_server

log = logging.getLogger(__name__)


def serve(tcp: str | None = None, log_file: str | None = None, log_level: str = "INFO") -> int:
    """Serve one client until it disconnects; stdio unless `tcp` is given."""
    _configure_logging(log_file, log_level)
    log.info("kbls %s serving (pid %d)", __version__, os.getpid())
    host = SharedDaemon()
    server = make_server(host, standalone=True)
    try:
        if tcp:
            host_name, port = _parse_tcp(tcp)
            transport.serve_tcp(server, host_name, port)
            return 0
        # stdout carries the protocol: anything else that writes to fd 1 (a library's print, a C
        # extension's warning) would corrupt it, so fd 1 becomes stderr and the protocol keeps a
        # private duplicate of the real stdout.
        protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        sys.stdout = sys.stderr
        transport.serve_stdio(server, sys.stdin.buffer, protocol_out)
        return 0
    finally:
        host.shutdown()


def _configure_logging(log_file: str | None, level: str) -> None:
    numeric = configure_logging(log_file, level, "%(asctime)s %(levelname)s %(name)s: %(message)s")
    # pygls logs every message it sends at INFO: keep that for --log-level DEBUG only.
    logging.getLogger("pygls").setLevel(numeric if numeric <= logging.DEBUG else logging.WARNING)


def _parse_tcp(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not port.isdigit():
        raise SystemExit(f"kbls: --tcp expects HOST:PORT or PORT, not {value!r}")
    return host or "127.0.0.1", int(port)
