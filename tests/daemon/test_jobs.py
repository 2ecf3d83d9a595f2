"""The daemon's job queue, without threads: collapse, order, preemption, retries, root changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbls.daemon.jobs import (
    BUSY_RETRY,
    FAIL_RETRY,
    FAIL_RETRY_MAX,
    FULL_RETRY,
    Job,
    JobQueue,
    OpenRequest,
    Outcome,
    RootChanges,
    Run,
    Stop,
    Wait,
    retry_delay,
)

A, B = "/w/a", "/w/b"


def queue_with(*keys: str) -> JobQueue:
    queue = JobQueue()
    for key in keys:
        queue.request_open(OpenRequest(f"file://{key}", Path(key)))
    changes = queue.next(0.0)
    assert isinstance(changes, RootChanges) and {o.key for o in changes.opens} == set(keys)
    for key in keys:
        queue.opened(key, Job())  # an empty job: nothing to scan
        run(queue)
        queue.finish(Outcome.DONE, 0.0)
    assert queue.idle
    return queue


def run(queue: JobQueue, now: float = 0.0) -> Run:
    step = queue.next(now)
    assert isinstance(step, Run), step
    return step


def test_a_burst_of_saves_collapses_into_one_job() -> None:
    queue = queue_with(A)
    for name in ("x.md", "y.md", "x.md", "z.md"):
        queue.add(A, Job(files={name}))
    step = run(queue)
    assert step.job.files == {"x.md", "y.md", "z.md"} and not step.job.full
    queue.finish(Outcome.DONE, 0.0)
    assert queue.next(0.0) == Wait(None) and queue.idle


def test_jobs_for_a_root_not_open_are_dropped_but_kept_while_it_opens() -> None:
    queue = JobQueue()
    queue.add(A, Job(files={"x.md"}))
    assert queue.idle
    queue.request_open(OpenRequest("file:///w/a", Path(A)))
    queue.add(A, Job(files={"x.md"}))
    changes = queue.next(0.0)
    assert isinstance(changes, RootChanges) and changes.opens[0].key == A and not changes.opens[0].reopen
    queue.opened(A, Job(full=True, progress=True))
    step = run(queue)  # the save first, then the scan of the opened root
    assert step.job.files == {"x.md"} and not step.job.full
    queue.finish(Outcome.DONE, 0.0)
    assert run(queue).job.full


def test_root_changes_come_before_any_job() -> None:
    queue = queue_with(A)
    queue.add(A, Job(files={"x.md"}))
    queue.request_open(OpenRequest("file:///w/b", Path(B)))
    assert isinstance(queue.next(0.0), RootChanges)
    assert isinstance(queue.next(0.0), Run)


def test_files_before_full_scans_across_roots_and_within_one() -> None:
    queue = queue_with(A, B)
    queue.add(A, Job(full=True))
    queue.add(B, Job(files={"b.md"}))
    assert run(queue).key == B
    queue.finish(Outcome.DONE, 0.0)
    queue.add(A, Job(files={"a.md"}))  # merged into A's scan, but run ahead of it
    first = run(queue)
    assert (first.key, first.job.files, first.job.full) == (A, {"a.md"}, False)
    queue.finish(Outcome.DONE, 0.0)
    second = run(queue)
    assert second.job.full and not second.job.files


def test_a_save_preempts_a_running_scan_which_resumes_after() -> None:
    queue = queue_with(A)
    queue.add(A, Job(full=True, progress=True))
    assert run(queue).job.full
    assert queue.add(A, Job(files={"saved.md"})) is True  # cancel the scan
    assert queue.finish(Outcome.DONE, 0.0) == 0.0  # the stopped scan is requeued at once
    save = run(queue)
    assert save.job.files == {"saved.md"} and not save.job.full
    queue.finish(Outcome.DONE, 0.0)
    assert run(queue).job.full


def test_a_save_does_not_preempt_a_running_save() -> None:
    queue = queue_with(A)
    queue.add(A, Job(files={"one.md"}))
    run(queue)
    assert queue.add(A, Job(files={"two.md"})) is False
    assert queue.add(A, Job(full=True)) is False


def test_busy_and_full_disk_are_retried_after_a_fixed_pause() -> None:
    queue = queue_with(A)
    queue.add(A, Job(files={"x.md"}))
    run(queue, 10.0)
    assert queue.finish(Outcome.BUSY, 10.0) == BUSY_RETRY
    assert queue.next(10.0) == Wait(10.0 + BUSY_RETRY)
    assert run(queue, 10.0 + BUSY_RETRY).job.files == {"x.md"}
    assert queue.finish(Outcome.FULL, 20.0) == FULL_RETRY
    assert queue.next(20.0 + FULL_RETRY - 0.1) == Wait(20.0 + FULL_RETRY)
    assert not queue.idle and queue.failures(A) == 0


def test_a_failed_job_is_never_dropped_and_backs_off_until_it_works() -> None:
    queue = queue_with(A)
    queue.add(A, Job(files={"x.md"}))
    now, delays = 0.0, []
    for _ in range(8):
        step = run(queue, now)
        assert step.job.files == {"x.md"}
        delay = queue.finish(Outcome.FAILED, now)
        assert delay is not None
        delays.append(delay)
        now += delay
    assert delays[:3] == [FAIL_RETRY, 2 * FAIL_RETRY, 4 * FAIL_RETRY]
    assert max(delays) == FAIL_RETRY_MAX and delays == sorted(delays)
    assert queue.failures(A) == 8
    queue.add(A, Job(files={"y.md"}))  # a save meanwhile waits for the retry, merged
    step = run(queue, now)
    assert step.job.files == {"x.md", "y.md"}
    assert queue.finish(Outcome.DONE, now) is None
    assert queue.failures(A) == 0 and queue.idle


def test_retry_delay_policy() -> None:
    assert retry_delay(Outcome.BUSY, 5) == BUSY_RETRY
    assert retry_delay(Outcome.FULL, 5) == FULL_RETRY
    assert retry_delay(Outcome.FAILED, 1) == FAIL_RETRY
    assert retry_delay(Outcome.FAILED, 100) == FAIL_RETRY_MAX


def test_closing_a_root_drops_its_jobs_and_abandons_its_running_job() -> None:
    queue = queue_with(A, B)
    queue.add(A, Job(full=True))
    queue.add(B, Job(files={"b.md"}))
    assert run(queue).key == B
    assert queue.request_close(A) is False  # not running: nothing to cancel
    assert queue.request_close(B) is True  # running: cancel it
    assert queue.finish(Outcome.FAILED, 0.0) is None  # not requeued
    changes = queue.next(0.0)
    assert changes == RootChanges(opens=(), closes=(A, B))
    queue.closed(A)
    queue.closed(B)
    assert queue.next(0.0) == Wait(None) and queue.idle


def test_close_then_open_of_an_open_root_is_a_reopen_and_open_then_close_a_close() -> None:
    queue = queue_with(A)
    queue.request_close(A)
    queue.request_open(OpenRequest("file:///w/a", Path(A)))
    changes = queue.next(0.0)
    assert isinstance(changes, RootChanges) and changes.closes == ()
    assert changes.opens == (OpenRequest("file:///w/a", Path(A), reopen=True),)
    queue.request_open(OpenRequest("file:///w/b", Path(B)))
    queue.request_close(B)
    assert queue.next(0.0) == RootChanges(opens=(), closes=(B,))


def test_a_reopened_root_starts_without_its_old_backoff() -> None:
    queue = queue_with(A)
    queue.add(A, Job(files={"x.md"}))
    run(queue)
    queue.finish(Outcome.FAILED, 0.0)
    queue.request_close(A)
    queue.request_open(OpenRequest("file:///w/a", Path(A)))
    assert isinstance(queue.next(0.0), RootChanges)
    queue.opened(A, Job(full=True))
    assert run(queue, 0.0).job.full and queue.failures(A) == 0


def test_pending_counts_queued_files_and_the_running_jobs_rest() -> None:
    queue = queue_with(A, B)
    queue.add(A, Job(full=True))
    queue.add(B, Job(files={"1.md", "2.md"}))
    assert queue.pending(lambda key: 40 if key == A else 0) == 42
    run(queue)  # B's files
    assert queue.running is not None
    queue.running.remaining = 1
    assert queue.pending(lambda key: 40) == 41


@pytest.mark.parametrize("running", [False, True])
def test_stop(running: bool) -> None:
    queue = queue_with(A)
    if running:
        queue.add(A, Job(files={"x.md"}))
        run(queue)
    assert queue.stop() is running
    assert queue.next(0.0) == Stop()


def test_a_second_open_of_an_open_root_does_not_drop_its_running_job() -> None:
    """An editor adding a folder that is open already asks for a plain open, which the worker
    skips; the job running meanwhile (a save that failed) must still be retried."""
    queue = queue_with(A)
    queue.add(A, Job(files={"x.md"}))
    run(queue)
    queue.request_open(OpenRequest("file:///w/a", Path(A)))
    assert queue.finish(Outcome.FAILED, 0.0) == FAIL_RETRY
    assert queue.next(0.0) == RootChanges(opens=(OpenRequest("file:///w/a", Path(A)),), closes=())
    assert run(queue, FAIL_RETRY).job.files == {"x.md"}


def test_embedding_runs_behind_saves_and_scans_and_a_save_stops_it() -> None:
    queue = queue_with(A, B)
    queue.add(A, Job(embed=True))
    queue.add(B, Job(full=True))
    step = run(queue)
    assert step.key == B and step.job.full, "a scan of any root before embedding"
    queue.finish(Outcome.DONE, 0.0)
    step = run(queue)
    assert step.key == A and step.job.embed_only
    assert queue.add(A, Job(files={"saved.md"})), "a save stops the embedding step"
    queue.finish(Outcome.DONE, 0.0)
    step = run(queue)
    assert step.job.files == {"saved.md"} and not step.job.embed, "the save runs first"
    queue.finish(Outcome.DONE, 0.0)
    step = run(queue)
    assert step.job.embed_only, "then the embedding resumes"
    queue.finish(Outcome.DONE, 0.0)
    assert queue.idle


def test_a_save_queued_with_embedding_runs_alone_first() -> None:
    queue = queue_with(A)
    queue.add(A, Job(embed=True))
    queue.add(A, Job(files={"x.md"}))
    step = run(queue)
    assert step.job.files == {"x.md"} and not step.job.embed
    queue.finish(Outcome.DONE, 0.0)
    assert run(queue).job.embed_only
