"""Timing one call again and again in-process, for the benchmarks that measure engine calls."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def timed(fn: Callable[[], object], runs: int = 50) -> tuple[float, float]:
    """(median, worst) milliseconds of `runs` calls of `fn`, after one call that warms it up."""
    fn()
    took = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        took.append((time.perf_counter() - started) * 1000)
    return statistics.median(took), max(took)
