"""The CLI's and `kbls mcp`'s client of the per-user daemon reads frames within the one frame cap."""

from __future__ import annotations

import socket

import pytest

from kbls.limits import MAX_FRAME_BYTES
from kbls.userdaemon.client import DaemonClient, DaemonUnavailable


def test_a_frame_over_the_cap_is_refused_before_it_is_read() -> None:
    ours, theirs = socket.socketpair()
    with theirs:
        client = DaemonClient(ours)
        try:
            theirs.sendall(b"Content-Length: %d\r\n\r\n{}" % (MAX_FRAME_BYTES + 1))
            with pytest.raises(DaemonUnavailable, match="at most"):
                client.request("kbls/cliStatus", {"root": "/nowhere"})
        finally:
            client.close(polite=False)
    ours, theirs = socket.socketpair()
    with theirs:
        client = DaemonClient(ours)
        try:
            theirs.sendall(b'Content-Length: 35\r\n\r\n{"jsonrpc":"2.0","id":1,"result":7}')
            assert client.request("kbls/cliStatus", {"root": "/nowhere"}) == 7  # a frame under the cap is read
        finally:
            client.close(polite=False)
