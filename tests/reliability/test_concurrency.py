"""Issue 6, "Concurrency": three daemons and `kbls index` on one root while a script edits,
renames and deletes files. No request may fail, no "database is locked" may reach a user
(answers, `window/showMessage`, CLI output), and once the edits stop the daemons must bring the
shared store to exactly a clean index of the final files, on their own (watchers only).

25 s of edits over 60 notes in `make test`; 60 s over 200 notes with KBLS_LONG=1.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from tests.support.corpus import make_corpus, note_text, sized, write_config
from tests.support.lsp_client import LspSession
from tests.support.processes import KBLS, child_env
from tests.support.store_check import check_store

from kbls.engine import Engine
from kbls.indexing.embed import Embedder

pytestmark = pytest.mark.slow


class Editor(threading.Thread):
    """Edits, creates, renames and deletes notes at random until stopped."""

    def __init__(self, root: Path, seed: int = 1) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.ops: dict[str, int] = {}
        self.made = 0

    def _notes(self) -> list[Path]:
        return sorted(self.root.rglob("*.md"))  # the store is beside the root, not in it

    def run(self) -> None:
        while not self.stop.is_set():
            notes = self._notes()
            op = self.rng.choice(["edit", "edit", "create", "rename", "delete"]) if notes else "create"
            if op == "edit":
                path = self.rng.choice(notes)
                path.write_text(note_text(self.rng.randint(0, 10**6), self.rng, version=self.made))
            elif op == "create":
                self.made += 1
                path = self.root / f"d{self.made % 10}" / f"new-{self.made}.md"
                path.parent.mkdir(exist_ok=True)
                path.write_text(note_text(10**6 + self.made, self.rng))
            elif op == "rename":
                self.made += 1
                path = self.rng.choice(notes)
                path.rename(path.with_name(f"renamed-{self.made}.md"))
            else:
                self.rng.choice(notes).unlink()
            self.ops[op] = self.ops.get(op, 0) + 1
            time.sleep(self.rng.uniform(0.05, 0.4))


class Searcher(threading.Thread):
    """Sends kb/search and kb/status to the daemons in turn; keeps every failure."""

    def __init__(self, daemons: list[LspSession]) -> None:
        super().__init__(daemon=True)
        self.daemons = daemons
        self.stop = threading.Event()
        self.failures: list[str] = []
        self.answered = 0

    def run(self) -> None:
        words = ["ownership borrow", "garden tomato", "train museum", "kernel socket cache", "unique7x0"]
        i = 0
        while not self.stop.is_set():
            daemon = self.daemons[i % len(self.daemons)]
            try:
                if i % 5 == 4:
                    daemon.request("kb/status", {})
                else:
                    daemon.search(words[i % len(words)], mode=["hybrid", "lexical", "semantic"][i % 3])
                self.answered += 1
            except Exception as exc:  # every failure counts, whatever its kind
                self.failures.append(f"{type(exc).__name__}: {exc}")
            i += 1
            time.sleep(0.02)


def _clean_index(tmp_path: Path, root: Path, embedder: Embedder) -> dict[str, list[tuple[str, str]]]:
    copy = tmp_path / "final-copy"
    shutil.copytree(root, copy)
    engine = Engine(copy, store_dir=tmp_path / "clean-store", embedder=embedder)
    try:
        engine.index()
    finally:
        engine.close()
    return check_store(tmp_path / "clean-store", copy, full_scan_done=True).chunks


def test_three_daemons_and_kbls_index_share_a_root_under_edits(tmp_path: Path, embedder: Embedder) -> None:
    root = tmp_path / "notes"
    make_corpus(root, sized(60, 200))
    store = write_config(root)
    daemons = [LspSession([root], tmp_path, name=f"d{i}") for i in range(3)]
    editor, searcher = Editor(root), Searcher(daemons)
    cli_failures: list[str] = []
    cli_runs = 0
    try:
        editor.start()
        searcher.start()
        deadline = time.monotonic() + sized(25, 60)
        while time.monotonic() < deadline:
            proc = subprocess.run(
                [str(KBLS), "index", "--root", str(root)], capture_output=True, text=True,
                env=child_env(tmp_path), timeout=300,
            )
            cli_runs += 1
            if proc.returncode != 0 or "locked" in proc.stderr or "Traceback" in proc.stderr:
                cli_failures.append(proc.stderr[-2000:])
        editor.stop.set()
        editor.join()
        time.sleep(1.0)  # the watchers' debounce

        expected = _clean_index(tmp_path, root, embedder)

        def converged() -> bool:
            if not all(d.status().state == "ready" and d.status().queue == 0 for d in daemons):
                return False
            try:
                return check_store(store).chunks == expected
            except AssertionError:
                return False  # read mid-write

        daemons[0].wait_for(converged, 180, "the shared store to equal a clean index of the final files")
        searcher.stop.set()
        searcher.join()
        final = check_store(store, root)
        assert final.chunks == expected
        for d in daemons:
            assert d.alive(), d.log_tail()
            shown = [m for m in d.shown() if "locked" in m or "Traceback" in m]
            assert not shown, shown
            assert "database is locked" not in d.log_file.read_text(errors="replace")
        assert not searcher.failures, searcher.failures[:5]
        assert not cli_failures, cli_failures[:2]
        print(f"edits {editor.ops}, {searcher.answered} requests answered, {cli_runs} kbls index runs")
    finally:
        editor.stop.set()
        searcher.stop.set()
        for d in daemons:
            d.close()
