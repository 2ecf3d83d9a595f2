"""A store on a read-only disk (a mounted snapshot, a disk remounted read-only after errors).

The store is fine: it must be searched, and `kbls index` must say in one line that it cannot
write, never take the store for a damaged one. Before, SQLite's "unable to open database file"
was read as damage: the set-aside rename died with a traceback (on a writable folder it would
have moved a healthy store aside and re-embedded every note), and searches failed.

The tmpfs is mounted as root or through passwordless `sudo -n`; elsewhere the test is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.corpus import write
from tests.support.files import remount
from tests.support.processes import assert_no_traceback, run_kbls


def test_a_store_on_a_read_only_disk_is_searched_and_never_set_aside(tmp_path: Path, disk: Path) -> None:
    root = tmp_path / "notes"
    write(root, "glacier.md", "# Glacier trip\n\nCrampons and an ice axe for the crevasse field.\n")
    write(root, "bread.md", "# Sourdough\n\nFeed the starter and bake the loaf in a Dutch oven.\n")
    store = disk / "store"
    where = ["--root", str(root), "--store", str(store)]
    assert run_kbls(["index", *where], tmp_path).returncode == 0
    before = sorted(p.name for p in store.iterdir())
    remount(disk, "ro")

    for command in (["index"], ["index", "--force"], ["index", "--rebuild"]):
        proc = run_kbls([*command, *where], tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 1, (command, proc.stderr)
        assert "read-only" in proc.stderr.lower() or "Read-only file system" in proc.stderr, proc.stderr
    proc = run_kbls(["search", "crampons ice axe", "--json", *where], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["path"] == "glacier.md"
    proc = run_kbls(["status", "--json", *where], tmp_path)
    assert proc.returncode == 0 and json.loads(proc.stdout)["files"] == 2, proc.stderr

    remount(disk, "rw")
    assert sorted(p.name for p in store.iterdir()) == before  # nothing set aside
    proc = run_kbls(["index", "--json", *where], tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["files"] == 2 and report["embedded"] == 0, report
    assert "moved" not in proc.stderr, proc.stderr
