"""The status reporter without threads: what reaches the listener, and when."""

from __future__ import annotations

from kbls.daemon.answers import IndexState, NullListener, SafeListener
from kbls.daemon.status import StatusReporter


class Recorder(NullListener):
    def __init__(self) -> None:
        self.statuses: list[IndexState] = []
        self.progress: list[tuple[str, object]] = []

    def index_status(self, status: IndexState) -> None:
        self.statuses.append(status)

    def progress_begin(self, title: str, message: str) -> object:
        self.progress.append(("begin", message))
        return "token"

    def progress_report(self, handle: object, percentage: int, message: str) -> None:
        self.progress.append(("report", percentage))

    def progress_end(self, handle: object, message: str) -> None:
        self.progress.append(("end", message))


def reporter_over(states: list[IndexState]) -> tuple[StatusReporter, Recorder]:
    recorder = Recorder()
    return StatusReporter(SafeListener(recorder), lambda message: states[0]), recorder


def test_a_new_state_or_error_is_sent_and_a_repeat_is_not() -> None:
    states = [IndexState("loading", 0)]
    reporter, recorder = reporter_over(states)
    reporter.emit()
    reporter.emit()
    states[0] = IndexState("indexing", 5)
    reporter.emit()
    states[0] = IndexState("error", 5, error="read-only")
    reporter.emit()
    states[0] = IndexState("error", 5, error="disk full")
    reporter.emit()
    assert [(s.state, s.error) for s in recorder.statuses] == [
        ("loading", None), ("indexing", None), ("error", "read-only"), ("error", "disk full")
    ]
    reporter.emit(force=True)  # forced but identical: still not sent twice
    assert len(recorder.statuses) == 4


def test_a_changing_count_is_throttled_unless_forced() -> None:
    states = [IndexState("indexing", 100)]
    reporter, recorder = reporter_over(states)
    reporter.emit()
    for pending in range(99, 90, -1):
        states[0] = IndexState("indexing", pending)
        reporter.emit()
    assert len(recorder.statuses) == 1  # all within 1/8 s of the first
    reporter.emit(force=True)
    assert recorder.statuses[-1].pending == 91


def test_one_progress_per_burst() -> None:
    reporter, recorder = reporter_over([IndexState("indexing", 1)])
    reporter.begin_progress("scanning")
    reporter.begin_progress("scanning again")  # already open: nothing new
    assert reporter.report_progress(10, 10)  # the last file is never throttled
    reporter.end_progress()
    reporter.end_progress()
    reporter.report_progress(10, 10)  # closed: nothing sent
    assert recorder.progress == [("begin", "scanning"), ("report", 100), ("end", "done")]
