"""A root's watcher: the editor's file events (`RootWatcher.changed`) are taken as the observer's.

Real watchdog observer and debouncer threads on a temporary folder; only the callbacks are the
test's. The editor does not say whether a path is a folder: an existing folder is one, and so is
a deleted path with no suffix that the rules would not index, unless the observer runs to say.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kbls.config import CONFIG_FILE
from kbls.daemon.watch import ChangeKind, RootWatcher

#: the watcher's quiet time: long enough for the observer's events of one write to arrive.
DELAY = 0.3


class Batches:
    """What the watcher handed over: (paths, rescan) batches and config reloads."""

    def __init__(self) -> None:
        self.batches: list[tuple[set[str], bool]] = []
        self.configs = 0
        self.cond = threading.Condition()

    def batch(self, paths: set[str], rescan: bool) -> None:
        with self.cond:
            self.batches.append((set(paths), rescan))
            self.cond.notify_all()

    def config(self) -> None:
        with self.cond:
            self.configs += 1
            self.cond.notify_all()

    def settled(self, quiet: float = DELAY * 4) -> list[tuple[set[str], bool]]:
        """The batches once nothing came for `quiet` seconds (at most 10 s in all)."""
        deadline = time.monotonic() + 10
        seen = -1
        with self.cond:
            while len(self.batches) != seen and time.monotonic() < deadline:
                seen = len(self.batches)
                self.cond.wait(quiet)
            return list(self.batches)


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[RootWatcher, Batches, Path]]:
    root = tmp_path / "kb"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# A\n", encoding="utf-8")
    got = Batches()
    watcher = RootWatcher(root, lambda rel: rel.endswith(".md"), got.batch, delay=DELAY, on_config=got.config)
    try:
        yield watcher, got, root
    finally:
        watcher.stop()


@pytest.fixture
def observed(watched: tuple[RootWatcher, Batches, Path]) -> tuple[RootWatcher, Batches, Path]:
    """`watched` with its own observer running too (its watches in place)."""
    watched[0].observe()
    time.sleep(0.2)
    return watched


@pytest.mark.parametrize(
    ("rel", "kind", "batch"),
    [
        ("a.md", "changed", ({"a.md"}, False)),
        ("gone.md", "deleted", ({"gone.md"}, False)),
        ("sub", "created", (set(), True)),  # a folder: its files are found by a rescan
        ("old-folder", "deleted", (set(), True)),  # not a note: may have been a folder of notes
        ("picture.png", "deleted", None),  # a file of another kind: nothing to rescan for
        ("sub/.b.md.swp", "deleted", None),  # an editor's temporary file
        (".kbls.yaml.tmp", "created", None),
        (".gitignore", "changed", (set(), True)),
        ("picture.png", "changed", None),  # not indexed
        ("node_modules/x.md", "created", None),  # never indexed
        ("sub", "changed", None),  # a folder's own change: its files report themselves
    ],
)
def test_an_editor_change_is_taken_as_the_observer_takes_its_event(
    watched: tuple[RootWatcher, Batches, Path], rel: str, kind: ChangeKind, batch: tuple[set[str], bool] | None
) -> None:
    watcher, got, _ = watched
    watcher.changed(rel, kind)
    assert got.settled() == ([batch] if batch else [])
    assert got.configs == 0


def test_an_editor_change_of_the_config_reloads_the_root(watched: tuple[RootWatcher, Batches, Path]) -> None:
    watcher, got, _ = watched
    watcher.changed(CONFIG_FILE, "changed")
    watcher.changed("a.md", "changed")  # covered by the reload's rescan
    got.settled()
    assert (got.configs, got.batches) == (1, [])


@pytest.mark.parametrize(
    ("rel", "batches", "reloads"),
    [("sub/b.md", [({"sub/b.md"}, False)], 0), (CONFIG_FILE, [], 1)],
    ids=["note", "config"],
)
def test_a_write_the_observer_sees_and_the_editor_reports_is_handled_once(
    observed: tuple[RootWatcher, Batches, Path], rel: str, batches: list[tuple[set[str], bool]], reloads: int
) -> None:
    """One batch for a note, one reload for the config: both land in the same debouncer."""
    watcher, got, root = observed
    (root / rel).write_text("# B\n" if rel.endswith(".md") else "exclude: [drafts/**]\n", encoding="utf-8")
    watcher.changed(rel, "changed")
    assert got.settled() == batches
    assert got.configs == reloads


def test_with_an_observer_a_deleted_path_of_unknown_kind_is_left_to_it(
    observed: tuple[RootWatcher, Batches, Path],
) -> None:
    """The editor cannot say whether `4913` (Vim's write test) was a folder; the observer can."""
    watcher, got, root = observed
    probe = root / "4913"
    probe.write_text("", encoding="utf-8")
    probe.unlink()
    watcher.changed("4913", "deleted")
    assert got.settled() == []


def test_without_an_observer_only_the_editor_reports_changes(watched: tuple[RootWatcher, Batches, Path]) -> None:
    watcher, got, root = watched
    (root / "c.md").write_text("# C\n", encoding="utf-8")
    assert got.settled() == []
    watcher.changed("c.md", "created")
    assert got.settled() == [({"c.md"}, False)]
