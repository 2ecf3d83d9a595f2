"""The per-user daemon's shared state: one `Daemon` (model, engines, index queue) for all clients.

Each client connection holds its own workspace folders. A folder is opened in the daemon when
the first client names it and closed when the last one lets go (reference counts keyed by the
folder as spelled), so two windows on one folder share one engine, one store and one index
queue, and a save is embedded once however many windows show the note. Everything the daemon
tells its front end (index state, progress, messages) goes to every connected client.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kbls.daemon.answers import IndexState, Listener
from kbls.daemon.roots import folder_path
from kbls.daemon.service import Daemon

log = logging.getLogger(__name__)


class FanOut:
    """A `Listener` that hands every call to each connected client's listener."""

    def __init__(self) -> None:
        # Guards _clients: connections come and go on the event loop, the worker calls from its thread.
        self._lock = threading.Lock()
        self._clients: list[Listener] = []

    def add(self, client: Listener) -> None:
        with self._lock:
            self._clients.append(client)

    def remove(self, client: Listener) -> None:
        with self._lock:
            if client in self._clients:
                self._clients.remove(client)

    def count(self) -> int:
        with self._lock:
            return len(self._clients)

    def _each(self) -> list[Listener]:
        with self._lock:
            return list(self._clients)

    def index_status(self, status: IndexState) -> None:
        for client in self._each():
            client.index_status(status)

    def progress_begin(self, title: str, message: str) -> object:
        # One handle per client that showed a progress UI; reports go to those clients only.
        return {id(c): (c, c.progress_begin(title, message)) for c in self._each()}

    def progress_report(self, handle: object, percentage: int, message: str) -> None:
        for client, own in _handles(handle):
            client.progress_report(own, percentage, message)

    def progress_end(self, handle: object, message: str) -> None:
        for client, own in _handles(handle):
            client.progress_end(own, message)

    def log_message(self, level: int, message: str) -> None:
        self._fan_out_message(level, message, lambda client: client.log_message)

    def show_message(self, level: int, message: str) -> None:
        self._fan_out_message(level, message, lambda client: client.show_message)

    def _fan_out_message(self, level: int, message: str, method: Callable[[Listener], Callable[[int, str], None]]) -> None:
        """Hand `message` to `method` of each client; logged here when no client is connected."""
        clients = self._each()
        if not clients:  # each client's server logs what it is told
            log.log(level, "%s", message)
        for client in clients:
            method(client)(level, message)


def _handles(handle: object) -> list[tuple[Listener, object]]:
    if not isinstance(handle, dict):
        return []
    return [pair for pair in handle.values() if isinstance(pair, tuple) and len(pair) == 2]


class SharedDaemon:
    """The one `Daemon` of the per-user process and the roots its clients hold."""

    def __init__(self, *, watch: bool = True) -> None:
        self.listeners = FanOut()
        self.daemon = Daemon(self.listeners, watch=watch)
        # Guards _refs, _overrides and _configured (event loop and handler threads). Held while
        # the daemon is asked to open or close a folder (that only queues it for the worker), so
        # the requests land in the order the counts changed: a close asked after the lock was let
        # go could land after another client's open and leave that client a closed folder.
        self._lock = threading.Lock()
        #: clients holding each open folder, by the folder as spelled
        self._refs: dict[str, int] = {}
        self._overrides: dict[str, Any] | None = None
        self._configured = False

    def start(self) -> None:
        self.daemon.start([])

    def shutdown(self) -> None:
        self.daemon.shutdown()

    def configure(self, overrides: dict[str, Any] | None) -> str | None:
        """Apply the first client's `initializationOptions` to every root; a warning if a later
        client's differ (the options are per daemon, as they were per `kbls serve`)."""
        with self._lock:
            if not self._configured:
                self._configured = True
                self._overrides = overrides or None
                self.daemon.configure(self._overrides)
                return None
            if (overrides or None) == self._overrides:
                return None
        return (
            "kbls: this window's initializationOptions differ from those the shared kbls daemon was started "
            "with; the daemon keeps the first ones (set them in .kbls.yaml, or run this editor's server with "
            "KBLS_NO_DAEMON=1)"
        )

    def acquire(self, uri: str, path: Path | str) -> None:
        """A client serves `path`: open it unless another client already did."""
        key = str(folder_path(path))
        with self._lock:
            count = self._refs.get(key, 0)
            self._refs[key] = count + 1
            if count == 0:
                log.info("opening %s for its first client", key)
                self.daemon.add_root(uri, path)

    def release(self, path: Path | str) -> None:
        """A client no longer serves `path`: close it once no client does."""
        key = str(folder_path(path))
        with self._lock:
            count = self._refs.get(key, 0) - 1
            if count > 0:
                self._refs[key] = count
            else:
                self._refs.pop(key, None)
            if count == 0:
                log.info("closing %s: its last client left", key)
                self.daemon.remove_root(path)

    def held(self) -> dict[str, int]:
        """Open folders and how many clients hold each (tests, status)."""
        with self._lock:
            return dict(self._refs)
