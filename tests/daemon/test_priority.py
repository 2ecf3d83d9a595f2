"""The index thread runs at a lower priority than the threads that answer the editor (Linux)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tests.support.corpus import FIXTURES, write_config
from tests.support.processes import child_env
from tests.support.raw_stdio import frame, initialize_params

from kbls.config import Config
from kbls.daemon.opener import daemon_defaults, daemon_threads
from kbls.daemon.priority import lower_priority, thread_nice
from kbls.daemon.worker import INDEX_NICENESS

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="nice is per thread on Linux only")


@linux
def test_lowering_one_thread_leaves_the_others_alone() -> None:
    before = thread_nice()
    seen: list[int] = []

    def lowered() -> None:
        assert lower_priority(5)
        seen.append(thread_nice())
        inner = threading.Thread(target=lambda: seen.append(thread_nice()))
        inner.start()  # a thread it starts inherits it (as onnxruntime's pool does)
        inner.join()

    worker = threading.Thread(target=lowered)
    worker.start()
    worker.join()
    assert seen == [min(before + 5, 19)] * 2
    assert thread_nice() == before


def test_the_daemon_leaves_a_core_unless_threads_are_set() -> None:
    assert daemon_defaults(Config()).model.threads == daemon_threads() >= 1
    chosen = Config(model=Config().model.__class__(threads=3))
    assert daemon_defaults(chosen).model.threads == 3


def _nice_values(pid: int) -> dict[int, int]:
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        out[int(task.name)] = int(fields[16])  # field 19 of stat: nice
    return out


@linux
def test_kbls_serve_indexes_on_a_lowered_thread(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    shutil.copytree(FIXTURES, root)
    write_config(root)
    proc = subprocess.Popen(
        [sys.executable, "-m", "kbls", "serve"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, env=child_env(tmp_path),
    )
    try:
        assert proc.stdin is not None
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params(root)}
        proc.stdin.write(frame(initialize) + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        proc.stdin.flush()
        base = thread_nice()
        deadline = time.monotonic() + 60
        nice: dict[int, int] = {}
        while time.monotonic() < deadline:
            nice = _nice_values(proc.pid)
            if any(v >= base + INDEX_NICENESS for v in nice.values()):
                break
            time.sleep(0.1)
        assert nice[proc.pid] == base, "the main thread keeps its priority"
        lowered = [tid for tid, v in nice.items() if v == min(base + INDEX_NICENESS, 19)]
        assert lowered and len(lowered) < len(nice), nice
    finally:
        proc.kill()
        proc.wait(timeout=30)
