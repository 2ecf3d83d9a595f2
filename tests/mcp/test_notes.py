"""The path rules and bounded reads behind `read_note` (kbls.mcp.notes), without a server."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.files import run_beside_fifo

from kbls.errors import OutsideRootError
from kbls.mcp.notes import MAX_NOTE_CHARS, MAX_NOTE_LINES, locate, read_lines


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    first, second, outside = tmp_path / "a", tmp_path / "b", tmp_path / "outside"
    for folder in (first / "sub", second, outside):
        folder.mkdir(parents=True)
    (first / "sub" / "n.md").write_text("# n\n")
    (second / "only-b.md").write_text("# b\n")
    (outside / "secret.md").write_text("# secret\n")
    (first / "out.md").symlink_to(outside / "secret.md")
    (first / "linked").symlink_to(outside, target_is_directory=True)
    return first, second, outside


def test_relative_paths_resolve_in_the_first_root_that_has_them(roots: tuple[Path, Path, Path]) -> None:
    first, second, _ = roots
    assert locate([first, second], "sub/n.md") == (first, "sub/n.md")
    assert locate([first, second], "./sub/n.md") == (first, "sub/n.md")
    assert locate([first, second], "only-b.md") == (second, "only-b.md")
    assert locate([first, second], str(second / "only-b.md")) == (second, "only-b.md")
    assert locate([first, second], "missing.md") == (first, "missing.md")  # the caller says it does not exist


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../outside/secret.md", "`..`"),
        ("sub/../../outside/secret.md", "`..`"),
        ("out.md", "leads outside"),
        ("linked/secret.md", "leads outside"),
        ("", "non-empty"),
        ("a\0b.md", "non-empty"),
        (".", "root folder"),
    ],
)
def test_paths_leading_out_are_refused(roots: tuple[Path, Path, Path], path: str, reason: str) -> None:
    first, second, _ = roots
    with pytest.raises(OutsideRootError, match=reason):
        locate([first, second], path)


def test_absolute_paths_outside_every_root_are_refused(roots: tuple[Path, Path, Path]) -> None:
    first, second, outside = roots
    for path in (str(outside / "secret.md"), "/etc/passwd", str(first) + "-sibling/x.md"):
        with pytest.raises(OutsideRootError, match="outside the indexed roots"):
            locate([first, second], path)
    with pytest.raises(OutsideRootError, match="no root"):
        locate([], "sub/n.md")


def test_a_range_is_read_one_based_and_inclusive(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_bytes(b"\xef\xbb\xbfone\r\ntwo\nthree\n")
    assert read_lines(note, None, None, 1000) == (["one", "two", "three"], 1, 3, 3, False)
    assert read_lines(note, 2, 2, 1000) == (["two"], 2, 2, 3, False)
    assert read_lines(note, 2, 99, 1000) == (["two", "three"], 2, 3, 3, False)
    for start, end in ((0, None), (3, 2), (4, None)):
        with pytest.raises(ValueError):
            read_lines(note, start, end, 1000)


def test_long_notes_are_read_in_pages_and_a_huge_line_is_cut(tmp_path: Path) -> None:
    note = tmp_path / "long.md"
    note.write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    lines, first, last, total, truncated = read_lines(note, None, None, 10**6)
    assert (first, last, total, truncated, len(lines)) == (1, MAX_NOTE_LINES, 1000, True, MAX_NOTE_LINES)
    lines, first, last, _, truncated = read_lines(note, last + 1, None, 10**6)
    assert lines[0] == f"line {MAX_NOTE_LINES + 1}" and truncated
    wide = tmp_path / "wide.md"
    wide.write_text("x" * (MAX_NOTE_CHARS * 2) + "\nnext\n")
    lines, first, last, total, truncated = read_lines(wide, None, None, 10**6)
    assert (len(lines[0]), first, last, total, truncated) == (MAX_NOTE_CHARS, 1, 1, 2, True)


def test_big_or_binary_files_are_refused(tmp_path: Path) -> None:
    big, binary = tmp_path / "big.md", tmp_path / "bin.md"
    big.write_text("x" * 101)
    binary.write_bytes(b"a\0b")
    with pytest.raises(ValueError, match="max_file_bytes"):
        read_lines(big, None, None, 100)
    with pytest.raises(ValueError, match="binary"):
        read_lines(binary, None, None, 100)


def test_a_fifo_in_place_of_the_note_is_refused_without_blocking(tmp_path: Path) -> None:
    """`read_note` checks `is_file` before `read_lines` opens it: a FIFO swapped in between
    blocked the MCP tool call forever on `open`."""
    import os

    fifo = tmp_path / "n.md"
    os.mkfifo(fifo)

    def read() -> BaseException | None:
        try:
            read_lines(fifo, None, None, 1000)
        except (OSError, ValueError) as exc:
            return exc
        return None

    raised = run_beside_fifo(read, fifo, "read_lines", timeout=10)
    assert isinstance(raised, ValueError) and "not a regular file" in str(raised)
