"""Which file a tool's `path` names, and reading a line range of it within bounds.

The rules are the daemon's (see docs/security.md): a relative path may not contain `..`; an
absolute path must lie inside a root; every component is resolved (symlinks included) and the
target must still lie inside that root. `read_lines` reads only files the index's include and
exclude rules accept, so `.git/config` or a `.env` inside a root is never returned.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from kbls.errors import OutsideRootError
from kbls.indexing.formats.documents import document_text
from kbls.indexing.text import read_regular

#: most lines and characters one `read_note` returns; the result says where to read on.
MAX_NOTE_LINES = 400
MAX_NOTE_CHARS = 40_000


def _inside(target: Path, root: Path) -> bool:
    return target == root or root in target.parents


def locate(roots: Sequence[Path], path: str) -> tuple[Path, str]:
    """(root, root-relative posix path) of `path`, which is relative to a root or absolute.

    A relative path is looked up in each root in order; the first root holding it wins (or the
    first root, when none does, so the caller can say the note does not exist).

    :raises OutsideRootError: for `..`, a path outside every root, or a symlink leading out.
    """
    if not path or "\0" in path:
        raise OutsideRootError("path must be a non-empty file path")
    if not roots:
        raise OutsideRootError("there is no root to read from")
    given = Path(path)
    if given.is_absolute():
        absolute = Path(os.path.abspath(given))
        for root in roots:
            real_root = Path(os.path.realpath(root))
            for base in (root, real_root):
                if _inside(absolute, base):
                    rel = absolute.relative_to(base).as_posix()
                    return root, _checked(root, rel, path)
        raise OutsideRootError(f"{path} is outside the indexed roots ({', '.join(str(r) for r in roots)})")
    pure = PurePosixPath(path.replace("\\", "/"))
    if any(part == ".." for part in pure.parts):
        raise OutsideRootError(f"{path}: paths with `..` are refused; give a path inside a root")
    rel = pure.as_posix()  # `./a.md` is `a.md`
    for root in roots:
        if (root / rel).exists():
            return root, _checked(root, rel, path)
    return roots[0], _checked(roots[0], rel, path)


def _checked(root: Path, rel: str, shown: str) -> str:
    """`rel` when its target, every symlink resolved, stays inside `root`."""
    if rel in ("", "."):
        raise OutsideRootError(f"{shown} is a root folder, not a note")
    target = Path(os.path.realpath(root / rel))
    if not _inside(target, Path(os.path.realpath(root))):
        raise OutsideRootError(f"{shown} leads outside the root {root} (symlink); it is not read")
    return rel


def read_checked(root: Path, file: Path, at_most: int) -> bytes | None:
    """Up to `at_most` bytes of `file`, opened as the file checked to lie inside `root`; None when
    it is not a regular file.

    The path is resolved and checked, then opened (without following a last symlink, without
    blocking on a FIFO), and the open file must be the checked one: its inode the one the check
    saw, and its own path (`/proc/self/fd`, where there is one) still inside the root. Opening
    the checked name again would follow a folder swapped for a symlink in between.

    :raises OutsideRootError: the file leads outside `root`, or changed between check and open.
    :raises OSError: when it cannot be opened or read.
    """
    real_root = Path(os.path.realpath(root))
    target = Path(os.path.realpath(file))
    if not _inside(target, real_root):
        raise OutsideRootError(f"{file} leads outside the root {root} (symlink); it is not read")
    checked = os.stat(target)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(target, flags)
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino) or not _fd_inside(fd, real_root):
            raise OutsideRootError(f"{file} changed while it was opened (a folder replaced by a symlink?); it is not read")
        if not stat.S_ISREG(opened.st_mode):
            return None
        return handle.read(at_most)


def _fd_inside(fd: int, real_root: Path) -> bool:
    """The open file's own path lies inside `real_root` (True where the system cannot say)."""
    try:
        return _inside(Path(os.readlink(f"/proc/self/fd/{fd}")), real_root)
    except OSError:
        return True


def read_lines(
    file: Path, start_line: int | None, end_line: int | None, max_bytes: int, cap: str = "max_file_bytes",
    *, root: Path | None = None,
) -> tuple[list[str], int, int, int, bool]:
    """(lines, first, last, total, truncated) of `file`'s 1-based inclusive range, bounded by
    `max_bytes`, the value of the setting `cap`; with `root`, `file` is opened as checked to lie
    inside it (`read_checked`).

    :raises OSError: when the file cannot be read; ValueError for a range outside the file.
    """
    # a FIFO swapped in after the caller's check must not block
    data = read_regular(file, max_bytes + 1) if root is None else read_checked(root, file, max_bytes + 1)
    if data is None:
        raise ValueError("not a regular file (FIFO, socket or device); kbls does not read it")
    if len(data) > max_bytes:
        raise ValueError(f"the file is larger than {cap} ({max_bytes} bytes); kbls does not index it")
    # As the indexer reads it: text decoded, a PDF's pages or a web page's article extracted
    # (DocumentError is a ValueError: binary, a scanned PDF).
    text = document_text(file.name, data)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    total = len(lines)
    first = 1 if start_line is None else start_line
    last = total if end_line is None else min(end_line, total)
    if first < 1 or (end_line is not None and end_line < first):
        raise ValueError(f"start_line must be ≥ 1 and ≤ end_line (got {start_line}..{end_line})")
    if first > max(total, 1):
        raise ValueError(f"start_line {first} is past the end of the note ({total} lines)")
    chosen: list[str] = []
    size = 0
    truncated = False
    for number in range(first, last + 1):
        line = lines[number - 1]
        if len(chosen) >= MAX_NOTE_LINES or size + len(line) + 1 > MAX_NOTE_CHARS:
            truncated = True
            if not chosen:  # one line longer than the whole budget: its start, marked as cut
                chosen.append(line[:MAX_NOTE_CHARS])
            break
        chosen.append(line)
        size += len(line) + 1
    return chosen, first, first + len(chosen) - 1, total, truncated
