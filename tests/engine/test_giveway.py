"""The index thread gives way to reads: `ReadsFirst.give_way` waits while a read runs, returns
as soon as the last one ends, and never waits longer than it is told."""

from __future__ import annotations

import threading
import time

from kbls.indexing.giveway import ReadsFirst


def test_with_no_read_running_it_does_not_wait() -> None:
    reads = ReadsFirst()
    started = time.perf_counter()
    reads.give_way(longest=5.0)
    assert time.perf_counter() - started < 0.05


def test_it_waits_for_the_running_reads_and_goes_on_when_the_last_ends() -> None:
    reads = ReadsFirst()
    entered = threading.Barrier(3)
    release = threading.Event()

    def read() -> None:
        with reads.reading():
            entered.wait()
            release.wait()

    readers = [threading.Thread(target=read) for _ in range(2)]
    for reader in readers:
        reader.start()
    entered.wait()
    gave_way = threading.Event()
    waiter = threading.Thread(target=lambda: (reads.give_way(longest=10.0), gave_way.set()))
    waiter.start()
    assert not gave_way.wait(0.2), "it went on while two reads ran"
    release.set()
    assert gave_way.wait(2.0), "it still waited after the reads ended"
    for thread in [*readers, waiter]:
        thread.join()


def test_under_reads_that_never_stop_it_waits_at_most_longest() -> None:
    reads = ReadsFirst()
    with reads.reading():
        started = time.perf_counter()
        reads.give_way(longest=0.1)
        waited = time.perf_counter() - started
    assert 0.09 <= waited < 1.0


def test_a_read_that_raises_still_ends() -> None:
    reads = ReadsFirst()
    try:
        with reads.reading():
            raise ValueError("bad query")
    except ValueError:
        pass
    started = time.perf_counter()
    reads.give_way(longest=5.0)
    assert time.perf_counter() - started < 0.05
