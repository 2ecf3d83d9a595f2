"""`kbls index` progress: a line at least every interval (10 s) when stderr is not a terminal, with
files done/total, chunks embedded, the rate and the ETA; the bar on a terminal; the pipeline's
progress events that feed both."""

from __future__ import annotations

import io
import json
import re
import shutil
import time
from pathlib import Path

from tests.support.processes import assert_no_traceback, child_env, run_kbls

from kbls.index_progress import DEFAULT_INTERVAL, IndexProgressOutput, duration, interval_from, progress_line
from kbls.indexing.pipeline import IndexProgress

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "notes"
LINE = re.compile(
    r"^kbls index: (\d+)/(\d+) files \((\d+)%\), (\d+) chunks embedded, "
    r"\d+\.\d files/s \(\d+\.\d chunks/s\), ETA (\S+), (\S+) elapsed$"
)


def test_the_real_cli_prints_progress_lines_on_a_non_terminal_stderr(tmp_path: Path) -> None:
    notes = tmp_path / "My Notes é"
    shutil.copytree(FIXTURES, notes)
    files = sum(1 for p in notes.rglob("*") if p.is_file())
    # The interval made short so that a run of seconds shows several lines; 10 s in production.
    env = child_env(tmp_path, KBLS_PROGRESS_INTERVAL="0.1")
    done = run_kbls(["index", "--root", str(notes), "--store", str(tmp_path / "store"), "--json"], tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert_no_traceback(done)
    report = json.loads(done.stdout)  # progress never reaches stdout
    lines = [line for line in done.stderr.splitlines() if line.startswith("kbls index:")]
    assert len(lines) >= 2, done.stderr
    progress = [LINE.match(line) for line in lines if "files (" in line]
    embedding = [line for line in lines if "files written, every note searchable by its words" in line]
    assert progress or embedding, lines  # the lexical pass is quick: its lines may all be of the embedding pass
    assert all(progress), lines
    counts = [(int(m.group(1)), int(m.group(4))) for m in progress if m]
    assert all(int(m.group(2)) == files for m in progress if m), lines
    assert counts == sorted(counts), "files done and chunks embedded only grow"
    assert not counts or counts[-1][1] <= report["embedded"]
    assert "\r" not in done.stderr, "no terminal bar in a log"


def test_no_progress_event_a_line_is_still_printed_each_interval() -> None:
    """A long model batch or a slow scan sends no event: the timer still prints."""
    out = io.StringIO()
    with IndexProgressOutput(out, tty=False, interval=0.05):
        time.sleep(0.4)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3 and all(line.startswith("kbls index: scanning the folder (") for line in lines), lines


def test_the_production_interval_is_10_s_unless_the_environment_sets_one() -> None:
    assert DEFAULT_INTERVAL == 10.0
    assert interval_from({}) == 10.0
    assert interval_from({"KBLS_PROGRESS_INTERVAL": "2.5"}) == 2.5
    assert interval_from({"KBLS_PROGRESS_INTERVAL": "soon"}) == 10.0
    assert interval_from({"KBLS_PROGRESS_INTERVAL": "0"}) == 10.0


def test_the_line_has_files_chunks_rate_and_eta() -> None:
    line = progress_line(IndexProgress(120, 577, "a.md", 910), elapsed=60.0)
    assert line == (
        "kbls index: 120/577 files (20%), 910 chunks embedded, 2.0 files/s (15.2 chunks/s), ETA 3m48s, 1m00s elapsed"
    )
    assert "ETA unknown" in progress_line(IndexProgress(0, 577, "", 0), elapsed=5.0)
    assert [duration(s) for s in (4.4, 65, 3725)] == ["4s", "1m05s", "1h02m"]


def test_on_a_terminal_the_bar_is_redrawn_in_place_and_no_line_is_printed() -> None:
    out = io.StringIO()
    with IndexProgressOutput(out, tty=True, interval=0.01) as progress:
        progress(IndexProgress(1, 2, "a.md", 0))
        progress(IndexProgress(2, 2, "b.md", 3))
        time.sleep(0.1)
    text = out.getvalue()
    assert text.startswith("\r[") and text.endswith("\n") and "2/2 3 chunks b.md" in text
    assert "kbls index:" not in text


def test_the_pipeline_reports_each_file_each_model_batch_and_each_write(root, note, make_engine):
    for i in range(3):
        note(f"n{i}.md", f"# Note {i}\n\nbody {i}\n")
    seen: list[IndexProgress] = []
    engine = make_engine(root)
    engine.index(progress=seen.append)
    # Lexical first: each note is done once written (without vectors), then the pass embeds.
    assert seen == [
        IndexProgress(1, 3, "n0.md", 0),
        IndexProgress(2, 3, "n1.md", 0),
        IndexProgress(3, 3, "n2.md", 0),
        IndexProgress(3, 3, "n2.md", 0, chunks_left=3, embedding=True),
        IndexProgress(3, 3, "n2.md", 3, chunks_left=0, embedding=True),
    ]
    later: list[IndexProgress] = []
    note("n3.md", "# Note 3\n\nbody 3\n")
    engine.index(progress=later.append)
    assert later[-1] == IndexProgress(1, 1, "n3.md", 1, embedding=True), "only the new note is looked at"


def test_in_the_embedding_pass_the_line_has_chunks_left_their_rate_and_eta() -> None:
    p = IndexProgress(577, 577, "z.md", 1000, chunks_left=3000, embedding=True)
    line = progress_line(p, elapsed=100.0, embedding_for=40.0, embedded_before=200)
    assert line == (
        "kbls index: 577/577 files written, every note searchable by its words; embedding 1000/4000 chunks (25%), "
        "20.0 chunks/s, ETA 2m30s, 1m40s elapsed"
    )
    clock = iter([0.0, 0.0, 10.0, 30.0, 30.0]).__next__
    out = io.StringIO()
    output = IndexProgressOutput(out, tty=False, interval=3600, clock=clock)
    with output:
        output(IndexProgress(2, 2, "b.md", 0, chunks_left=100, embedding=True))  # embedding begins at 10 s
        output(IndexProgress(2, 2, "b.md", 40, chunks_left=60, embedding=True))
        assert output.line().endswith("embedding 40/100 chunks (40%), 2.0 chunks/s, ETA 30s, 30s elapsed")


def test_the_cli_prints_the_embedding_pass_on_a_non_terminal_stderr(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    shutil.copytree(FIXTURES, notes)
    env = child_env(tmp_path, KBLS_PROGRESS_INTERVAL="0.05")
    done = run_kbls(["index", "--root", str(notes), "--store", str(tmp_path / "store")], tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert re.search(r"files written, every note searchable by its words; embedding \d+/\d+ chunks", done.stderr), done.stderr
