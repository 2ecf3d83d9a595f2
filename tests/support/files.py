"""File-system situations tests stage: permissions as another user, FIFOs that would block a
reader forever, and a small disk that can be made read-only (a tmpfs, mounted as root or
through passwordless `sudo -n`; elsewhere the test is skipped)."""

from __future__ import annotations

import codecs
import contextlib
import ctypes
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


@contextlib.contextmanager
def filesystem_uid(uid: int) -> Iterator[None]:
    """Check file permissions as `uid` in this thread (Linux setfsuid), when running as root.

    Root reads a mode-000 file regardless of its mode, so a plain chmod proves nothing there.
    Changing the filesystem uid away from 0 also drops CAP_DAC_OVERRIDE (capabilities(7)), so
    the kernel really refuses the read; the code under test runs in this thread. Not root: no-op.
    """
    if os.geteuid() != 0:
        yield
        return
    # Modules imported lazily must be imported first: a Python installed under /root (pyenv)
    # cannot be read as `uid` ("unknown encoding: utf-8-sig" in decode_text).
    codecs.lookup("utf-8-sig")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.setfsuid(uid)
    try:
        yield
    finally:
        libc.setfsuid(0)


def run_beside_fifo(work: Callable[[], T], fifo: Path, what: str, timeout: float = 60) -> T:
    """`work()` on a thread; if it is still running after `timeout` it is blocked on `fifo`:
    a writer is opened to set it free (so the suite goes on) and the test fails with `what`."""
    result: list[T] = []
    worker = threading.Thread(target=lambda: result.append(work()), daemon=True)
    worker.start()
    worker.join(timeout=timeout)
    if worker.is_alive():
        with open(fifo, "wb"):
            pass
        pytest.fail(f"{what} blocked on a FIFO")
    assert result, f"{what} raised (see the thread's traceback above)"
    return result[0]


SUDO: list[str] = [] if os.geteuid() == 0 else ["sudo", "-n"]


@contextlib.contextmanager
def mounted_tmpfs(mount: Path) -> Iterator[Path]:
    """A small tmpfs at the empty folder `mount` (unmounted after); the test is skipped where
    mounting is not permitted."""
    try:
        proc = subprocess.run(
            [*SUDO, "mount", "-t", "tmpfs", "-o", "size=32m,mode=1777", "tmpfs", str(mount)],
            capture_output=True, text=True,
        )
    except FileNotFoundError as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc}")
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run([*SUDO, "umount", "-l", str(mount)], check=False)


def remount(mount: Path, mode: str) -> None:
    """Remount the tmpfs at `mount` `ro` or `rw`."""
    subprocess.run([*SUDO, "mount", "-o", f"remount,{mode}", str(mount)], check=True)
