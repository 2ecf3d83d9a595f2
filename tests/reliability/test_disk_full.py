"""Issue 6, "Disk full": the store on a small tmpfs that fills up during indexing.

The daemon must tell the user (`window/showMessage`), keep answering searches from what was
committed, and finish the index by itself once space returns. `kbls index` must say so in one
line (no traceback) and leave a consistent store.

The tmpfs is mounted with `mount -t tmpfs -o size=...`, as root or through passwordless
`sudo -n` (GitHub runners); where mounting is not permitted the tests are skipped: RLIMIT_FSIZE
would only make SQLite see EFBIG (an I/O error), not the ENOSPC of a full disk.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.support.corpus import make_corpus, write_config
from tests.support.lsp_client import LspSession
from tests.support.processes import assert_no_traceback, run_kbls
from tests.support.store_check import check_store

pytestmark = pytest.mark.slow

NOTES = 300  # a ~2.5 MB store (vec0 allocates 1.5 MB up front)
SMALL = "3m"
LARGE = "64m"

#: (mount point, grow it to LARGE, resize it to a size)
SmallDisk = tuple[Path, Callable[[], None], Callable[[str], None]]


def _fill(path: Path) -> None:
    """Take every byte left on the file system of `path`."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    for size in (65536, 4096, 512, 1):
        try:
            while True:
                os.write(fd, b"\0" * size)
        except OSError:
            pass
    os.close(fd)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """(mount point, grow): a SMALL tmpfs, as root or through passwordless sudo (CI runners)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    sudo: list[str] = [] if os.geteuid() == 0 else ["sudo", "-n"]
    try:
        proc = subprocess.run(
            [*sudo, "mount", "-t", "tmpfs", "-o", f"size={SMALL},mode=1777", "tmpfs", str(mount)],
            capture_output=True, text=True,
        )
    except FileNotFoundError as exc:  # no sudo (or no mount) on this machine
        pytest.skip(f"cannot mount a tmpfs here: {exc}")
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")

    def resize(size: str) -> None:
        subprocess.run([*sudo, "mount", "-o", f"remount,size={size}", str(mount)], check=True)

    try:
        yield mount, lambda: resize(LARGE), resize
    finally:
        subprocess.run([*sudo, "umount", "-l", str(mount)], check=False)


def _root_on(disk: Path, tmp_path: Path, notes: int) -> tuple[Path, Path]:
    """A root of `notes` generated notes whose store (not yet created) is on the small disk."""
    root = tmp_path / "notes"
    make_corpus(root, notes)
    store = disk / "store"
    write_config(root, store=str(store))
    return root, store


def test_kbls_index_on_a_full_disk_says_so_and_resumes(tmp_path: Path, small_disk: SmallDisk) -> None:
    disk, grow, _ = small_disk
    root, store = _root_on(disk, tmp_path, NOTES)
    proc = run_kbls(["index", "--root", str(root)], tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert "full" in proc.stderr, proc.stderr
    partial = check_store(store, root)
    grow()
    proc = run_kbls(["index", "--root", str(root), "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    final = check_store(store, root, full_scan_done=True)
    assert len(final.chunks) == NOTES
    assert set(partial.chunks) <= set(final.chunks)


def test_daemon_reports_a_full_disk_keeps_answering_and_resumes(tmp_path: Path, small_disk: SmallDisk) -> None:
    disk, grow, _ = small_disk
    root, store = _root_on(disk, tmp_path, NOTES)
    daemon = LspSession([root], tmp_path)
    try:
        daemon.wait_for(lambda: any("full" in m for m in daemon.shown()), 180, "a message about the full disk")
        assert daemon.alive()
        committed = daemon.status().roots[0].files
        for _ in range(5):
            result = daemon.search("ownership borrow lifetime", mode="lexical")
            assert len(result.hits) > 0 or committed == 0
        grow()
        daemon.wait_for(lambda: daemon.status().roots[0].files == NOTES, 180, "indexing to resume")
        assert daemon.search("ownership borrow lifetime").hits
    finally:
        daemon.close()
    assert len(check_store(store, root).chunks) == NOTES


def _indexed_root(tmp_path: Path, disk: Path, grow: Callable[[], None]) -> tuple[Path, Path]:
    """A 30-note root indexed by `kbls index` into a store on the (grown) small disk."""
    grow()
    root, store = _root_on(disk, tmp_path, 30)
    assert run_kbls(["index", "--root", str(root)], tmp_path).returncode == 0
    return root, store


def test_a_healthy_store_on_a_full_disk_is_not_set_aside_as_damaged(tmp_path: Path, small_disk: SmallDisk) -> None:
    disk, grow, resize = small_disk
    root, store = _indexed_root(tmp_path, disk, grow)
    before = check_store(store, root, full_scan_done=True)
    resize("4m")
    _fill(disk / "filler")
    for args in (["search", "garden", "--root", str(root)], ["index", "--root", str(root)]):
        proc = run_kbls(args, tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode in (0, 1) and (proc.returncode == 0 or "full" in proc.stderr), proc.stderr
        assert not list(store.glob("*.damaged-*")), f"{args[0]}: a healthy store was set aside: {proc.stderr}"
    (disk / "filler").unlink()
    grow()
    proc = run_kbls(["index", "--root", str(root), "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert '"embedded": 0' in proc.stdout, "the index was rebuilt from scratch"
    assert check_store(store, root, full_scan_done=True).chunks == before.chunks


def test_daemon_started_on_a_full_disk_serves_the_root_once_space_returns(
    tmp_path: Path, small_disk: SmallDisk
) -> None:
    disk, grow, resize = small_disk
    root, store = _indexed_root(tmp_path, disk, grow)
    resize("4m")
    _fill(disk / "filler")
    daemon = LspSession([root], tmp_path)
    try:
        daemon.wait_for(lambda: any("full" in m or "I/O" in m for m in daemon.shown()), 60, "a message about the disk")
        assert not list(store.glob("*.damaged-*"))
        (disk / "filler").unlink()
        grow()
        daemon.wait_for(lambda: daemon.status().roots and daemon.status().state == "ready", 60, "the root to open")
        assert daemon.search("garden tomato").hits
        assert daemon.status().embedded_since_start == 0
    finally:
        daemon.close()
