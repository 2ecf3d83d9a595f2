"""A lower scheduling priority for the daemon's index thread.

On Linux `nice` belongs to each thread: `setpriority(PRIO_PROCESS, tid)` on the thread's own id
changes that thread alone, and threads it starts later (onnxruntime's pool, created when the
model loads on that thread) inherit it. The LSP's threads, which answer the editor, keep theirs.
Elsewhere a thread id is no process id (macOS), so nothing is changed there.
"""

from __future__ import annotations

import logging
import os
import sys
import threading

log = logging.getLogger(__name__)

#: the highest nice value
NICEST = 19


def thread_nice(tid: int | None = None) -> int:
    """The nice value of the thread `tid` (None: the calling thread)."""
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id() if tid is None else tid)


def lower_priority(niceness: int) -> bool:
    """Add `niceness` to the calling thread's nice value (Linux only); False when not done."""
    if not sys.platform.startswith("linux") or niceness <= 0:
        return False
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(thread_nice(tid) + niceness, NICEST))
    except OSError as exc:
        log.info("cannot lower the index thread's priority: %s", exc)
        return False
    return True
