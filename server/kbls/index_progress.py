"""`kbls index` progress on stderr.

On a terminal, a one-line bar redrawn in place. Anywhere else (a log file, CI, a pipe, an editor's
task output) a bar is noise, and silence looks like a hang: a first index of a few hundred notes
takes minutes on a laptop. There a plain line is printed every `interval` seconds (10 by default;
`KBLS_PROGRESS_INTERVAL` sets another) from a timer thread, so a long model batch or a slow scan
still prints: files done of total, chunks embedded, the rate and the time left; once every note
is written (searchable by its words) the embedding pass: chunks embedded of all, their rate and
the time left. A run shorter than one interval prints no progress line.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TextIO

from kbls.indexing.progress import IndexProgress

INTERVAL_ENV = "KBLS_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 10.0


def interval_from(env: Mapping[str, str]) -> float:
    """Seconds between progress lines: `KBLS_PROGRESS_INTERVAL` when it is a positive number."""
    try:
        value = float(env.get(INTERVAL_ENV, ""))
    except ValueError:
        return DEFAULT_INTERVAL
    return value if value > 0 else DEFAULT_INTERVAL


def duration(seconds: float) -> str:
    """45s, 3m05s, 1h02m."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def progress_line(p: IndexProgress | None, elapsed: float, embedding_for: float = 0.0, embedded_before: int = 0) -> str:
    """One line: files done/total, chunks embedded, rate, ETA and time so far; in the embedding
    pass (every note written, `embedding_for` seconds of embedding that began with
    `embedded_before` chunks embedded) the chunks left, their rate and ETA."""
    if p is None:
        return f"kbls index: scanning the folder ({duration(elapsed)} elapsed)"
    if p.embedding:
        done = p.chunks_embedded - embedded_before
        rate = done / embedding_for if embedding_for > 0 else 0.0
        eta = duration(p.chunks_left / rate) if rate > 0 else ("0s" if not p.chunks_left else "unknown")
        total = p.chunks_embedded + p.chunks_left
        return (
            f"kbls index: {p.files_done}/{p.files_total} files written, every note searchable by its words; "
            f"embedding {p.chunks_embedded}/{total} chunks ({100 * p.chunks_embedded // max(total, 1)}%), "
            f"{rate:.1f} chunks/s, ETA {eta}, {duration(elapsed)} elapsed"
        )
    percent = 100 * p.files_done // max(p.files_total, 1)
    files_rate = p.files_done / elapsed if elapsed > 0 else 0.0
    chunks_rate = p.chunks_embedded / elapsed if elapsed > 0 else 0.0
    eta = duration((p.files_total - p.files_done) / files_rate) if files_rate > 0 else "unknown"
    return (
        f"kbls index: {p.files_done}/{p.files_total} files ({percent}%), {p.chunks_embedded} chunks embedded, "
        f"{files_rate:.1f} files/s ({chunks_rate:.1f} chunks/s), ETA {eta}, {duration(elapsed)} elapsed"
    )


class IndexProgressOutput:
    """The pipeline's progress callback for `kbls index`; a context manager around the run.

    The pipeline calls it from the indexing thread; the timer thread only reads the latest
    snapshot (under a lock) and writes whole lines.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        tty: bool | None = None,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.interval = interval_from(os.environ) if interval is None else interval
        self._clock = clock
        self._started = clock()
        self._latest: IndexProgress | None = None
        #: when the embedding pass began, and the chunks embedded by then
        self._embedding: tuple[float, int] | None = None
        self._drawn = 0.0  # when the bar was last drawn; 0: never
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None

    def __enter__(self) -> IndexProgressOutput:
        self._started = self._clock()
        if not self.tty:
            self._timer = threading.Thread(target=self._tick, name="kbls-index-progress", daemon=True)
            self._timer.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._timer is not None:
            self._timer.join()
        if self.tty and self._drawn:
            self.stream.write("\n")  # the summary goes below the bar
            self.stream.flush()

    def __call__(self, progress: IndexProgress) -> None:
        with self._lock:
            self._latest = progress
            if progress.embedding and self._embedding is None:
                self._embedding = (self._clock(), progress.chunks_embedded)
        if self.tty:
            self._draw_bar(progress)

    def line(self) -> str:
        with self._lock:
            latest, embedding = self._latest, self._embedding
        now = self._clock()
        if embedding is None:
            return progress_line(latest, now - self._started)
        return progress_line(latest, now - self._started, now - embedding[0], embedding[1])

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def _draw_bar(self, p: IndexProgress) -> None:
        if self._clock() - self._drawn < 0.1 and (p.files_done < p.files_total or p.chunks_left):
            return
        self._drawn = self._clock()
        width = 30
        filled = width * p.files_done // max(p.files_total, 1)
        if p.embedding:  # every note written: the bar counts chunks
            total = p.chunks_embedded + p.chunks_left
            filled = width * p.chunks_embedded // max(total, 1)
            self.stream.write(
                f"\r[{'#' * filled}{'.' * (width - filled)}] embedding {p.chunks_embedded}/{total} chunks{'':<24}"
            )
            self.stream.flush()
            return
        name = p.path if len(p.path) <= 40 else "…" + p.path[-39:]
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {p.files_done}/{p.files_total} "
            f"{p.chunks_embedded} chunks {name:<40}"
        )
        self.stream.flush()
