"""Issue 6, "Hostile input" (files): every odd file is skipped or indexed, with the reason in
the store's problem list (what `kb/status` reports as `errors`), and time and memory stay bounded.

Bounds (docs/security.md): a file over `max_file_bytes` (2,000,000 by default) is skipped
before it is read; frontmatter over 64 KiB or with more than 10 anchors and 100 aliases is
ignored; a whole index of the hostile root stays under 1 GiB of memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.support.corpus import long_run, write_config
from tests.support.processes import KBLS, child_env
from tests.support.store_check import check_store

from kbls.config import Config
from kbls.engine import Engine
from kbls.indexing.embed import Embedder
from kbls.indexing.parse import parse_note
from kbls.indexing.scan import Candidate


def yaml_bomb(levels: int, width: int) -> str:
    """Billion laughs: `levels` anchors, each a list of `width` aliases of the previous one."""
    lines = [f"l0: &l0 [{','.join(['lol'] * width)}]"]
    lines += [f"l{i}: &l{i} [{','.join(['*l' + str(i - 1)] * width)}]" for i in range(1, levels)]
    return "---\n" + "\n".join(lines) + "\ntags: *l" + str(levels - 1) + "\n---\n# Bomb\n\nbody after a yaml bomb\n"


#: the classic 9 x 9: PyYAML shares the aliased nodes, nothing expands them (kbls reads only
#: scalars and flat lists), so it is indexed; past 10 anchors and 100 aliases it is not parsed.
BILLION_LAUGHS = yaml_bomb(9, 9)
BIGGER_BOMB = yaml_bomb(12, 10)

#: name -> (bytes, what the reason must contain; None when it must be indexed cleanly)
FILES: dict[str, tuple[bytes, str | None]] = {
    "binary.md": (bytes(range(256)) * 64, "binary"),
    "nul-in-text.md": (b"# Title\n\nsome text\x00more text\n", "binary"),
    "invalid-utf8.md": (b"# Latin-1\n\ncaf\xe9 cr\xe8me br\xfbl\xe9e\n", "invalid UTF-8"),
    "bomb.md": (BILLION_LAUGHS.encode(), None),
    "bigger-bomb.md": (BIGGER_BOMB.encode(), "too many YAML aliases"),
    "list-frontmatter.md": (b"---\n- a\n- b\n---\n# Listed\n\nbody\n", "not a mapping"),
    "scalar-frontmatter.md": (b"---\njust a string\n---\n# Scalar\n\nbody\n", "not a mapping"),
    "unclosed-frontmatter.md": (b"---\ntitle: x\n# Never closed\n\nbody\n", "frontmatter"),
    "bad-yaml.md": (b"---\ntitle: [unclosed\n---\n# Bad yaml\n\nbody\n", "malformed YAML"),
    "nested.md": ("".join("  " * i + f"- item {i}\n" for i in range(600)).encode(), None),
    "empty.md": (b"", None),
    "crlf.md": (b"# Windows\r\n\r\nline one\r\nline two\r\n", None),
    "bom.md": ("\ufeff# With BOM\n\nbody\n".encode(), None),
    # Issue 14: Windows editors save UTF-16 with a BOM; NUL bytes there are not "binary".
    "utf16-le.md": ("\ufeff# UTF-16 LE\n\nsaved by Notepad\n".encode("utf-16-le"), None),
    "utf16-be.md": ("\ufeff# UTF-16 BE\n\nbig endian\n".encode("utf-16-be"), None),
    "utf32.md": ("\ufeff# UTF-32\n\nfour bytes a character\n".encode("utf-32-le"), None),
    "utf16-odd.md": ("\ufeff# Cut short\n".encode("utf-16-le") + b"\x41", "invalid UTF-16"),
}


def _hostile_root(root: Path, outside: Path) -> dict[str, str]:
    """Write the hostile files; returns {rel path: reason fragment} of those that need a reason."""
    root.mkdir(parents=True, exist_ok=True)
    expected: dict[str, str] = {}
    for name, (data, reason) in FILES.items():
        (root / name).write_bytes(data)
        if reason:
            expected[name] = reason
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.md").write_text("# Secret\n\nthe password is swordfish\n")
    os.symlink(outside / "secret.md", root / "escape.md")
    expected["escape.md"] = "outside the workspace root"
    os.symlink(root / "loop-b.md", root / "loop-a.md")
    os.symlink(root / "loop-a.md", root / "loop-b.md")
    expected["loop-a.md"] = expected["loop-b.md"] = "cannot stat"
    os.symlink(root, root / "self-loop")  # a directory loop: must not trap the walk
    os.symlink(outside, root / "outside-dir")  # a directory escaping the root: not followed
    os.symlink("/dev/zero", root / "zero.md")
    expected["zero.md"] = "outside the workspace root"
    (root / "dangling.md").symlink_to(root / "nowhere.md")
    fd = os.open(bytes(root) + b"/bad-name-\xff\xfe.md", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"# Not UTF-8 name\n")
    os.close(fd)
    expected["bad-name-\\xff\\xfe.md"] = "name"
    (root / "line\nbreak.md").write_text("# Newline in the name\n")
    expected["line\nbreak.md"] = "name"
    os.mkfifo(root / "fifo.md")  # reading it would block forever
    (root / "ok.md").write_text("# Fine\n\nan ordinary note about gardening\n")
    return expected


def test_hostile_files_are_skipped_or_indexed_with_a_reason(tmp_path: Path, embedder: Embedder) -> None:
    root = tmp_path / "notes"
    expected = _hostile_root(root, tmp_path / "outside")
    engine = Engine(root, store_dir=tmp_path / "store", embedder=embedder)
    try:
        started = time.perf_counter()
        report = engine.index()
        assert time.perf_counter() - started < 120
        problems = {e.path: e.reason for e in engine.status().errors}
        for path, fragment in expected.items():
            assert path in problems, f"{path!r}: no reason in the status (have {sorted(problems)})"
            assert fragment in problems[path], (path, problems[path])
        indexed = set(check_store(engine.store_dir, root, full_scan_done=True).chunks)
        for name in ("ok.md", "invalid-utf8.md", "bomb.md", "nested.md", "crlf.md", "bom.md", "list-frontmatter.md",
                     "utf16-le.md", "utf16-be.md", "utf32.md", "utf16-odd.md"):
            assert name in indexed, f"{name} was not indexed"
        assert not any("secret" in p or "outside-dir" in p or "self-loop" in p for p in indexed)
        assert not engine.search("swordfish password", mode="lexical").hits, "read a file outside the root"
        assert report.files == len(indexed | {"empty.md"})  # an empty note is indexed without chunks
        again = engine.index()
        assert again.embedded == 0 and again.changed == 0
    finally:
        engine.close()


def test_a_file_deleted_between_listing_and_reading_costs_nothing(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "stays.md").write_text("# Stays\n\nkept\n")
    (root / "goes.md").write_text("# Goes\n\nremoved while indexing\n")
    engine = Engine(root, store_dir=tmp_path / "store", embedder=embedder)
    walk = engine.scanner.walk

    def walk_then_delete() -> list[Candidate]:
        found = walk()
        (root / "goes.md").unlink()
        return found

    monkeypatch.setattr(engine.scanner, "walk", walk_then_delete)
    try:
        engine.index()
        monkeypatch.setattr(engine.scanner, "walk", walk)
        engine.index()
        assert set(check_store(engine.store_dir, root, full_scan_done=True).chunks) == {"stays.md"}
    finally:
        engine.close()


def test_a_50_mb_single_line_is_skipped_unread(tmp_path: Path, embedder: Embedder) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    with open(root / "huge.md", "wb") as handle:
        handle.write(b"x" * (50 * 1024 * 1024))
    engine = Engine(root, store_dir=tmp_path / "store", embedder=embedder)
    try:
        started = time.perf_counter()
        engine.index()
        assert time.perf_counter() - started < 10
        (problem,) = engine.status().errors
        assert problem.path == "huge.md" and "max_file_bytes" in problem.reason
    finally:
        engine.close()


def test_100k_tiny_headings_parse_and_chunk_in_bounded_time(embedder: Embedder) -> None:
    from kbls.indexing.chunk import Chunker

    text = "".join(f"# h{i}\n" for i in range(100_000))
    started = time.perf_counter()
    chunks = Chunker(embedder, Config().chunk).chunk(parse_note("headings.md", text))
    elapsed = time.perf_counter() - started
    assert elapsed < 60, elapsed
    assert 1000 < len(chunks) < 20_000  # tiny sections merge: ~5,200 chunks of 20-30 headings


def test_yaml_bomb_frontmatter_is_not_expanded() -> None:
    for bomb in (BILLION_LAUGHS, BIGGER_BOMB, yaml_bomb(10, 10)):
        started = time.perf_counter()
        note = parse_note("bomb.md", bomb)
        assert time.perf_counter() - started < 1
        assert note.title == "Bomb" and len(note.tags) <= 10


#: runs argv[1:] and prints its peak RSS. The measured process is forked from this small
#: interpreter, not from pytest: a child's ru_maxrss counts the pages it shared with its parent
#: before exec, so a child of a big pytest process reads as big as pytest.
_PEAK_RSS = (
    "import os, resource, subprocess, sys; rc = subprocess.call(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=open(os.environ['PEAK_FILE'], 'w')); "
    "sys.exit(rc)"
)


def _rusage_run(args: list[str], tmp_path: Path) -> tuple[int, float, int]:
    """(exit status, seconds, peak RSS in KiB) of one child run."""
    marker = tmp_path / "peak"
    with open(tmp_path / "child.out", "wb") as out:
        started = time.perf_counter()
        rc = subprocess.call(
            [sys.executable, "-c", _PEAK_RSS, *args], stdout=out, stderr=subprocess.STDOUT,
            env=child_env(tmp_path, PEAK_FILE=str(marker)),
        )
    return rc, time.perf_counter() - started, int(marker.read_text())


@pytest.mark.slow
def test_index_of_the_hostile_root_stays_within_time_and_memory(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    _hostile_root(root, tmp_path / "outside")
    with open(root / "huge.md", "wb") as handle:
        handle.write(b"y" * (50 * 1024 * 1024))
    if long_run():
        (root / "headings.md").write_text("".join(f"# h{i}\n" for i in range(100_000)))
    write_config(root, store=str(tmp_path / "store"))
    rc, seconds, peak_kib = _rusage_run([str(KBLS), "index", "--root", str(root)], tmp_path)
    output = (tmp_path / "child.out").read_text(errors="replace")
    assert rc == 0, output
    assert "Traceback" not in output
    assert peak_kib < 1024 * 1024, f"peak RSS {peak_kib} KiB"
    assert seconds < (900 if long_run() else 120), seconds
    print(f"hostile root: {seconds:.1f}s, peak RSS {peak_kib / 1024:.0f} MiB")


def test_daemon_lists_each_skipped_file_with_its_reason_in_kb_status(tmp_path: Path) -> None:
    from tests.support.lsp_client import LspSession

    root = tmp_path / "notes"
    expected = _hostile_root(root, tmp_path / "outside")
    write_config(root, store=str(tmp_path / "store"))
    daemon = LspSession([root], tmp_path)
    try:
        status = daemon.wait_ready()
        problems = {e.path: e.reason for e in status.roots[0].errors}
        for path, fragment in expected.items():
            assert fragment in problems.get(path, ""), (path, problems.get(path))
        assert daemon.search("ordinary note about gardening").hits
    finally:
        daemon.close()


def test_a_utf16_note_is_found_by_kbls_search(tmp_path: Path) -> None:
    """Issue 14: a UTF-16 note with a BOM was skipped as "binary file" and could never be found."""
    root = tmp_path / "notes"
    root.mkdir()
    write_config(root)
    text = "# Quarterly zeppelin budget\r\n\r\nThe zeppelin hangar lease.\r\n"
    (root / "windows.md").write_bytes(text.encode("utf-16"))  # with its BOM, as Notepad saves it
    env = child_env(tmp_path)
    index = subprocess.run([str(KBLS), "index", "--root", str(root)], capture_output=True, text=True, env=env, timeout=300)
    assert index.returncode == 0, index.stderr
    assert "windows.md" not in index.stderr, index.stderr  # no reason listed: indexed cleanly
    search = subprocess.run(
        [str(KBLS), "search", "zeppelin hangar", "--root", str(root), "--mode", "lexical", "--json"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert search.returncode == 0, search.stderr
    hits = json.loads(search.stdout)
    assert [h["path"] for h in hits] == ["windows.md"] and hits[0]["title"] == "Quarterly zeppelin budget"
