"""Reads before writes: the index thread waits while a search or another read runs.

A lower nice value keeps the index thread off the CPU the reads need, but not off the GIL: its
Python work (parsing, chunking, writing a note) took half of it from the searches, and each note
it wrote made the next searches start their caches again, so searches during a first index were
2-3x slower at p99. Reads now say when they run (`reading`), and the indexer, before each note
and each model batch, waits until none does, for at most `LONGEST_WAIT_S`: under a constant
stream of reads it still does one step per wait. The GIL is the process's, so this is too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: the longest the indexer waits for the reads to stop before it takes one step anyway
LONGEST_WAIT_S = 0.05


class ReadsFirst:
    """How many reads run now, and a wait for none to."""

    def __init__(self) -> None:
        self._running = 0
        self._quiet = threading.Condition()

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._quiet:
            self._running += 1
        try:
            yield
        finally:
            with self._quiet:
                self._running -= 1
                if not self._running:
                    self._quiet.notify_all()

    def give_way(self, longest: float = LONGEST_WAIT_S) -> None:
        """Wait until no read runs, or `longest` seconds."""
        with self._quiet:
            if self._running:
                self._quiet.wait_for(lambda: not self._running, timeout=longest)


#: the process's reads (one GIL, so one count)
READS = ReadsFirst()
