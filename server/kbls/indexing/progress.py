"""How far an indexing run is, as its callers are told: after each file, model batch and write."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class IndexProgress:
    """How far one indexing run is: after each file looked at, each model batch and each write."""

    #: files finished (written, found unchanged or skipped) of those this run looks at; a note
    #: read but waiting for its batch's embedding is not done yet
    files_done: int
    files_total: int
    #: the file last looked at
    path: str
    #: chunk texts embedded so far in this run (vectors already stored are not counted)
    chunks_embedded: int
    #: in the embedding pass (every note is searchable by its words already): chunk texts still
    #: waiting for their vectors
    chunks_left: int = 0
    #: True once the run embeds what its lexical pass wrote
    embedding: bool = False


ProgressFn = Callable[[IndexProgress], None]


@dataclass
class Tracker:
    """A run's progress, told to the caller's callback (if any) as files and batches finish."""

    progress: ProgressFn | None
    files_total: int
    looked: int = 0
    #: notes read into the batch, not written yet
    waiting: int = 0
    path: str = ""
    chunks_embedded: int = 0
    chunks_left: int = 0
    embedding: bool = False

    def looked_at(self, count: int, path: str) -> None:
        self.looked, self.path = count, path
        self.tell()

    def embedded(self, count: int) -> None:
        self.chunks_embedded += count
        self.chunks_left = max(self.chunks_left - count, 0)
        self.tell()

    def written(self, count: int, *, tell: bool = True) -> None:
        self.waiting -= count
        if tell:
            self.tell()

    def start_embedding(self, left: int) -> None:
        self.embedding, self.chunks_left = True, left
        self.tell()

    def tell(self) -> None:
        if self.progress is not None:
            done = self.looked - self.waiting
            self.progress(
                IndexProgress(
                    done, self.files_total, self.path, self.chunks_embedded, self.chunks_left, self.embedding
                )
            )


class Rate:
    """Chunks embedded per second over the last `window` seconds (what an ETA is made of)."""

    def __init__(self, window: float = 30.0) -> None:
        self.window = window
        self._samples: list[tuple[float, int]] = []  # (time, chunks embedded so far)
        self._total = 0

    def add(self, count: int, now: float) -> None:
        if not self._samples:
            self._samples.append((now, 0))  # the clock starts at the first batch's start
        self._total += count
        self._samples.append((now, self._total))
        while len(self._samples) > 2 and now - self._samples[1][0] > self.window:
            self._samples.pop(0)

    def per_second(self, now: float) -> float:
        if len(self._samples) < 2:
            return 0.0
        (start, first), (_, last) = self._samples[0], self._samples[-1]
        return (last - first) / max(now - start, 1e-9)
