"""The index queue of the daemon, pure: what runs next, with no threads, locks or clock of its own.

The worker holds it under its lock and passes the time in, so every rule here is unit-tested
without threads (tests/daemon/test_jobs.py). The rules:

- Work is kept per root as "rescan everything" and/or a set of files, so a burst of saves or
  watcher events collapses into one job.
- Root changes (open, close, reopen) come before any job; files (saves, watcher batches) before
  full scans, full scans before embedding what a lexical pass wrote. A save preempts a running
  full scan or embedding step, which is requeued and resumes cheaply (the scan is incremental,
  the pending texts wait in the store).
- A job that could not run goes back in the queue with a time before which it is not retried:
  `busy` (another process writing) after BUSY_RETRY, a full disk or stalled writer after
  FULL_RETRY, any other failure after a backoff doubling from FAIL_RETRY up to FAIL_RETRY_MAX.
  Nothing is dropped until its root is closed.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

#: seconds before a job refused with `busy` (another process writing) is tried again.
BUSY_RETRY = 0.5
#: seconds before indexing is tried again after the store's disk was full or its writer stalled.
FULL_RETRY = 5.0
#: first pause after a failed job; doubled after each further failure, up to FAIL_RETRY_MAX.
FAIL_RETRY = 1.0
FAIL_RETRY_MAX = 30.0


@dataclass
class Job:
    """What to do for one root: a full scan, some files, or both."""

    full: bool = False
    force: bool = False
    files: set[str] = field(default_factory=set)
    #: report it with window/workDoneProgress (root opened, kb/reindex).
    progress: bool = False
    #: embed chunk texts the lexical pass left pending (a step at a time, requeued until none is)
    embed: bool = False

    def merge(self, other: Job) -> None:
        self.full |= other.full
        self.force |= other.force
        self.files |= other.files
        self.progress |= other.progress
        self.embed |= other.embed

    @property
    def embed_only(self) -> bool:
        return self.embed and not self.full and not self.files

    @property
    def preemptible(self) -> bool:
        """A long job that a save stops (it is requeued and resumes where it was)."""
        return self.full or self.embed_only

    def size(self, known_files: int) -> int:
        """Files this job looks at (a full scan: the files the store knew)."""
        return known_files if self.full else len(self.files)


class Outcome(enum.Enum):
    """How a job ended, as the worker saw it."""

    DONE = "done"
    BUSY = "busy"  # another process held the writer lock: nothing was done
    FULL = "full"  # the disk is full or a writer stalled: what was committed stays
    FAILED = "failed"  # anything else (unwritable or vanished store, a bug)


def retry_delay(outcome: Outcome, failures: int) -> float:
    """Seconds before a job that ended with `outcome` runs again (`failures` in a row so far)."""
    if outcome is Outcome.BUSY:
        return BUSY_RETRY
    if outcome is Outcome.FULL:
        return FULL_RETRY
    return min(FAIL_RETRY * 2.0 ** max(failures - 1, 0), FAIL_RETRY_MAX)


@dataclass(frozen=True)
class OpenRequest:
    uri: str
    folder: Path
    #: close the open root of that folder and open it again (its config or store changed).
    reopen: bool = False

    @property
    def key(self) -> str:
        return str(self.folder)


@dataclass
class Running:
    """The job the worker is running."""

    key: str
    job: Job
    #: files it has left to look at (updated by the worker's progress callback).
    remaining: int
    #: a save arrived for its root while it was a full scan: requeue it when it stops.
    preempted: bool = False
    #: its root is being closed or reopened: do not requeue it.
    abandoned: bool = False


# -- what `JobQueue.next` answers -------------------------------------------------------------
@dataclass(frozen=True)
class RootChanges:
    """Open, reopen and close these roots before running anything."""

    opens: tuple[OpenRequest, ...]
    closes: tuple[str, ...]


@dataclass(frozen=True)
class Run:
    key: str
    job: Job


@dataclass(frozen=True)
class Wait:
    """Nothing to run now; `until` (monotonic seconds) the next retry, None: until work comes."""

    until: float | None


@dataclass(frozen=True)
class Stop:
    """The daemon is shutting down."""


Next = RootChanges | Run | Wait | Stop


class JobQueue:
    """Per-root jobs, root changes and the running job. Not thread-safe: the worker's lock guards it."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._retry_at: dict[str, float] = {}
        self._failures: dict[str, int] = {}
        self._open: set[str] = set()
        #: pending root changes in arrival order, by folder: an OpenRequest, or None to close it.
        self._changes: dict[str, OpenRequest | None] = {}
        self.running: Running | None = None
        self.stopped = False

    # -- roots ---------------------------------------------------------------------------------
    def request_open(self, request: OpenRequest) -> None:
        """Open (or with `reopen`, reopen) a root before the next job."""
        pending = self._changes.pop(request.key, False)
        closing_first = pending is None or (isinstance(pending, OpenRequest) and pending.reopen)
        if closing_first and request.key in self._open:
            request = OpenRequest(request.uri, request.folder, reopen=True)
        self._changes[request.key] = request
        self._abandon(request.key, when=request.reopen)

    def request_close(self, key: str) -> bool:
        """Close a root: its jobs are dropped. True when its job is running (cancel it)."""
        self._changes.pop(key, None)
        self._changes[key] = None
        self._forget(key)
        return self._abandon(key, when=True)

    def opened(self, key: str, scan: Job) -> None:
        """The worker opened a root: it is known from now on and `scan` is queued for it."""
        self._open.add(key)
        self._retry_at.pop(key, None)  # a fresh engine: no pause inherited from the old one
        self._failures.pop(key, None)
        self.add(key, scan)

    def closed(self, key: str) -> None:
        self._open.discard(key)
        self._forget(key)

    def is_known(self, key: str) -> bool:
        """Open, or about to be opened (jobs for it are kept)."""
        return key in self._open or isinstance(self._changes.get(key), OpenRequest)

    def _forget(self, key: str) -> None:
        self._jobs.pop(key, None)
        self._retry_at.pop(key, None)
        self._failures.pop(key, None)

    def _abandon(self, key: str, *, when: bool) -> bool:
        if when and self.running is not None and self.running.key == key:
            self.running.abandoned = True
            return True
        return False

    # -- jobs ----------------------------------------------------------------------------------
    def add(self, key: str, job: Job) -> bool:
        """Queue `job` (merged with what is queued for the root). True: preempt the running job.

        A job for a root that is neither open nor being opened is dropped.
        """
        if not self.is_known(key):
            return False
        if key in self._jobs:
            self._jobs[key].merge(job)
        else:
            self._jobs[key] = job
        running = self.running
        if running is not None and running.job.preemptible and job.files and not job.full:
            # A save should not wait behind a long scan or embedding: stop it, it resumes after.
            running.preempted = True
            return True
        return False

    def next(self, now: float) -> Next:
        """What the worker does next; a `Run` becomes the running job until `finish`."""
        if self.stopped:
            return Stop()
        if self._changes:
            changes = list(self._changes.items())
            self._changes.clear()
            return RootChanges(
                opens=tuple(change for _, change in changes if change is not None),
                closes=tuple(key for key, change in changes if change is None),
            )
        for key in [k for k in self._jobs if k not in self._open]:
            self._forget(key)
        ready = [k for k in self._jobs if self._retry_at.get(k, 0.0) <= now]
        if ready:
            # Files (saves, watcher batches) before full scans before embedding, also within one
            # root's job.
            key = next(
                (k for k in ready if self._jobs[k].files), next((k for k in ready if self._jobs[k].full), ready[0])
            )
            queued = self._jobs[key]
            if queued.files and (queued.full or queued.embed):
                job = Job(files=queued.files, force=queued.force)
                queued.files = set()
            else:
                job = self._jobs.pop(key)
            self.running = Running(key, job, remaining=len(job.files))
            return Run(key, job)
        if self._jobs:
            return Wait(min(self._retry_at[k] for k in self._jobs))
        return Wait(None)

    def finish(self, outcome: Outcome, now: float) -> float | None:
        """The running job ended. Returns the seconds until its retry, None when not requeued."""
        running, self.running = self.running, None
        if running is None:
            return None
        key, job = running.key, running.job
        if running.abandoned or key not in self._open or self._closing(key):
            return None
        if outcome is Outcome.DONE:
            self._failures.pop(key, None)
            self._retry_at.pop(key, None)
            if running.preempted and job.preemptible:
                self.add(key, job)
                return 0.0
            return None
        if outcome is Outcome.FAILED:
            self._failures[key] = self._failures.get(key, 0) + 1
        delay = retry_delay(outcome, self._failures.get(key, 0))
        self._retry_at[key] = now + delay
        self.add(key, job)
        return delay

    def _closing(self, key: str) -> bool:
        """A close or reopen of the root is pending (a plain open of an open root changes nothing)."""
        change = self._changes.get(key, False)
        return change is None or (isinstance(change, OpenRequest) and change.reopen)

    def failures(self, key: str) -> int:
        """Failed runs in a row for the root (0 after a success)."""
        return self._failures.get(key, 0)

    # -- reading -------------------------------------------------------------------------------
    def pending(self, known_files: Callable[[str], int]) -> int:
        """Files queued or left in the running job; `known_files(key)` sizes a full scan."""
        queued = sum(job.size(known_files(key)) for key, job in self._jobs.items())
        return queued + (self.running.remaining if self.running is not None else 0)

    @property
    def lexical_idle(self) -> bool:
        """No scan or save queued or running and no root waiting to be opened: every note is
        written with its links and tags, whatever still waits for its vector."""
        running = self.running is None or self.running.job.embed_only
        return running and not self._changes and all(job.embed_only for job in self._jobs.values())

    @property
    def idle(self) -> bool:
        """Nothing queued, running or waiting to be opened or closed."""
        return not self._jobs and self.running is None and not self._changes

    def stop(self) -> bool:
        """Stop for good; True when a job is running (cancel it)."""
        self.stopped = True
        return self.running is not None
