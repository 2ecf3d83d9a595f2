"""An engine's lifetime as a type: `Leased` hands the engine out only inside `with lease() as it:`.

Closing a store's SQLite connections while another thread runs a query on one crashed the
daemon (SIGSEGV inside SQLite), and a read that started after the close opened a connection to
the replaced file again. So nothing reaches an engine except through a lease: `retire` refuses
new leases at once (`BeingReopenedError`, the clients' "being reopened, try again") and the
last lease to end closes it; with no lease in flight `retire` closes it itself.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from kbls.errors import BeingReopenedError

T = TypeVar("T")


class Leased(Generic[T]):
    """One value (an engine) and the leases on it; `close` runs once, after `retire` and the last lease."""

    def __init__(self, value: T, close: Callable[[T], None], name: str) -> None:
        self._value = value
        self._close = close
        #: what the "being reopened" error names (the root's folder).
        self.name = name
        # Guards _leases and _retired: taken from every reading thread and whoever retires.
        self._lock = threading.Lock()
        self._leases = 0
        self._retired = False

    @contextlib.contextmanager
    def lease(self) -> Iterator[T]:
        """The value, for the length of the block. :raises BeingReopenedError: it was retired."""
        with self._lock:
            if self._retired:
                raise BeingReopenedError(f"{self.name} is being reopened; try again in a moment")
            self._leases += 1
        try:
            yield self._value
        finally:
            self._release()

    def _release(self) -> None:
        with self._lock:
            self._leases -= 1
            last = self._retired and self._leases == 0  # retired while this lease ran
        if last:
            self._close(self._value)

    def retire(self) -> None:
        """No new lease from now on; close now, or when the last lease in flight ends. Idempotent."""
        with self._lock:
            if self._retired:
                return
            self._retired = True
            idle = self._leases == 0
        if idle:
            self._close(self._value)

    @property
    def retired(self) -> bool:
        with self._lock:
            return self._retired
