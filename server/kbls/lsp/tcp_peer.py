"""Who is at the other end of a `kbls serve --tcp` connection: only this user on this machine.

A loopback port is open to every local user, and the index is the user's private notes, so a
TCP connection is served only when the kernel says its socket belongs to this process's uid
(`/proc/net/tcp`, the peer's socket found by its port pair). Anything else (another uid, a peer
that is not on loopback, a system without `/proc/net/tcp`) is closed before a byte is read.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any

_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))


def same_user(peer: Any, own: Any) -> bool:
    """`peer` and `own` are the connection's `getpeername()`/`getsockname()` tuples."""
    try:
        host, peer_port, own_port = str(peer[0]), int(peer[1]), int(own[1])
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except (TypeError, ValueError, IndexError):
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    if not (address.is_loopback or (mapped is not None and mapped.is_loopback)):
        return False
    return socket_owner(peer_port, own_port) == os.getuid()


def socket_owner(local_port: int, remote_port: int) -> int | None:
    """The uid owning the TCP socket bound to `local_port` and connected to `remote_port`."""
    for table in _TABLES:
        try:
            rows = table.read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            try:
                local, remote = int(fields[1].rsplit(":", 1)[1], 16), int(fields[2].rsplit(":", 1)[1], 16)
                if (local, remote) == (local_port, remote_port):
                    return int(fields[7])
            except (IndexError, ValueError):
                continue
    return None
