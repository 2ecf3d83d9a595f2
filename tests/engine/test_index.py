"""Indexing with the real model: incrementality counted at the embedder, and bad input that
must cost one file (skipped or indexed with a reason), never the run or any other file."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.files import filesystem_uid, run_beside_fifo

from kbls.config import Config
from kbls.engine import Engine
from kbls.indexing.pipeline import IndexProgress
from kbls.results import IndexReport

#: the `make_engine` and `note` fixtures (tests/engine/conftest.py), for the annotated tests.
MakeEngine = Callable[..., Engine]
WriteNote = Callable[..., object]

SENTENCES = 5


def _section(i: int, extra: str = "") -> str:
    body = " ".join(
        f"Paragraph {i} sentence {j} describes subsystem number {i} and its behaviour in detail."
        for j in range(SENTENCES)
    )
    return f"## Section {i}\n\n{body}{extra}\n"


def _twenty_sections(edit: int | None = None) -> str:
    parts = ["# Handbook\n\nThe handbook of the twenty subsystems, one section each.\n"]
    for i in range(20):
        parts.append(_section(i, " An edited sentence appears here now." if i == edit else ""))
    return "\n".join(parts)


def _chunks_by_path(engine) -> dict[str, list[dict]]:
    return {path: engine.store.file_chunks(path) for path in engine.store.files()}


# -- incrementality --------------------------------------------------------------------------
def test_editing_one_paragraph_re_embeds_only_that_sections_chunks(root, note, make_engine, count_embedded):
    note("handbook.md", _twenty_sections())
    engine = make_engine(root)
    counter = count_embedded(engine)
    first = engine.index()
    assert first.embedded == len(counter.take()) == first.chunks
    section_7 = [c for c in engine.store.file_chunks("handbook.md") if c.breadcrumb == "Handbook > Section 7"]
    assert len(section_7) >= 1 and first.chunks >= 20  # each section is its own chunk at least

    note("handbook.md", _twenty_sections(edit=7))
    report = engine.index()
    embedded = counter.take()
    assert report.embedded == len(embedded) == len(section_7)
    # Breadcrumb, then the note's opening words (kbls.indexing.chunk.OPENING_TOKENS), then the body.
    assert all(text.startswith("Handbook > Section 7\nThe handbook of the twenty subsystems") for text in embedded)
    assert all("An edited sentence appears here now." in text for text in embedded)
    assert report.reused == first.chunks - len(section_7)
    assert report.chunks == first.chunks


def test_editing_a_notes_opening_re_embeds_the_chunks_that_carry_it(root, note, make_engine, count_embedded):
    """Every chunk after the first embeds the note's opening words: changing them changes
    what those chunks mean, so all of them are embedded again; the rest of the store is not."""
    note("handbook.md", _twenty_sections())
    note("other.md", "# Other\n\nA second note about something else entirely.\n")
    engine = make_engine(root)
    counter = count_embedded(engine)
    first = engine.index()
    counter.take()
    note("handbook.md", _twenty_sections().replace("twenty subsystems", "twenty parts"))
    report = engine.index()
    embedded = counter.take()
    handbook = engine.store.file_chunks("handbook.md")
    assert report.embedded == len(embedded) == len(handbook) == first.chunks - 1
    assert all("The handbook of the twenty parts" in text for text in embedded)


def test_an_unchanged_re_index_embeds_nothing(root, note, make_engine, count_embedded):
    note("handbook.md", _twenty_sections())
    note("other/notes.md", "# Other\n\nA second note about something else entirely.\n")
    engine = make_engine(root)
    counter = count_embedded(engine)
    engine.index()
    counter.take()
    report = engine.index()
    assert counter.take() == []
    assert report.embedded == 0 and report.changed == 0 and report.deleted == 0


def test_touching_a_file_re_reads_it_but_embeds_nothing(root, note, make_engine, count_embedded):
    path = note("handbook.md", _twenty_sections())
    engine = make_engine(root)
    counter = count_embedded(engine)
    engine.index()
    counter.take()
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    report = engine.index()
    assert counter.take() == [] and report.embedded == 0 and report.changed == 0


def test_force_re_index_re_reads_everything_and_embeds_nothing(root, note, make_engine, count_embedded):
    note("handbook.md", _twenty_sections())
    engine = make_engine(root)
    counter = count_embedded(engine)
    first = engine.index()
    counter.take()
    report = engine.index(force=True)
    assert counter.take() == [] and report.embedded == 0
    assert report.changed == 1 and report.reused == first.chunks


def test_a_renamed_file_embeds_nothing(root, note, make_engine, count_embedded):
    path = note("drafts/handbook.md", _twenty_sections())
    engine = make_engine(root)
    counter = count_embedded(engine)
    first = engine.index()
    counter.take()
    (root / "archive").mkdir()
    path.rename(root / "archive" / "handbook-2024.md")
    report = engine.index()
    assert counter.take() == [] and report.embedded == 0
    assert report.deleted == 1 and report.chunks == first.chunks
    assert set(engine.store.files()) == {"archive/handbook-2024.md"}
    hits = engine.search("subsystem number 7 behaviour", limit=3).hits
    assert hits and all(h.path == "archive/handbook-2024.md" for h in hits)


def test_a_rename_seen_as_two_paths_embeds_nothing(root, note, make_engine, count_embedded):
    """The watcher's view of a rename: index([old, new]), or the old path first, then the new."""
    path = note("a/handbook.md", _twenty_sections())
    engine = make_engine(root)
    counter = count_embedded(engine)
    engine.index()
    counter.take()
    moved = root / "b" / "handbook.md"
    moved.parent.mkdir()
    path.rename(moved)
    report = engine.index([path, moved])
    assert counter.take() == [] and report.embedded == 0 and report.deleted == 1
    again = root / "c.md"
    moved.rename(again)
    engine.index([moved])  # the deletion arrives first ...
    engine.index([again])  # ... and the new name later: the vectors are still there
    assert counter.take() == [] and set(engine.store.files()) == {"c.md"}


def test_search_sees_an_edit_and_forgets_the_old_text(root, note, make_engine):
    path = note("log.md", "# Log\n\nToday I repaired the bicycle chain.\n")
    engine = make_engine(root)
    engine.index()
    assert engine.search("bicycle", mode="lexical").hits
    path.write_text("# Log\n\nToday I tuned the violin strings.\n")
    engine.index()
    assert not engine.search("bicycle", mode="lexical").hits
    hits = engine.search("musical instrument maintenance", mode="semantic").hits
    assert hits[0].path == "log.md" and "violin" in hits[0].snippet
    assert engine.status().vectors == engine.status().chunks  # the old vector was collected


def test_a_deleted_file_leaves_the_index(root, note, make_engine):
    note("keep.md", "# Keep\n\nThis note stays.\n")
    gone = note("gone.md", "# Gone\n\nThis note about zeppelins is deleted.\n")
    engine = make_engine(root)
    engine.index()
    gone.unlink()
    report = engine.index()
    assert report.deleted == 1 and set(engine.store.files()) == {"keep.md"}
    assert all(h.path != "gone.md" for h in engine.search("zeppelins", mode="lexical").hits)


def test_indexing_named_paths_only_touches_those(root, note, make_engine, count_embedded):
    note("a.md", "# A\n\nAlpha note.\n")
    b = note("b.md", "# B\n\nBeta note.\n")
    engine = make_engine(root)
    counter = count_embedded(engine)
    engine.index()
    counter.take()
    b.write_text("# B\n\nBeta note, edited.\n")
    report = engine.index([b])
    assert report.scanned == 1 and report.changed == 1
    embedded = counter.take()
    assert len(embedded) == 1 and "Beta note, edited." in embedded[0]


def test_a_path_outside_the_root_is_refused(root, tmp_path, make_engine):
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret\n\nnot part of the workspace\n")
    engine = make_engine(root)
    report = engine.index([outside])
    assert report.changed == 0 and "outside the workspace root" in report.skipped[0].reason


# -- bad input -------------------------------------------------------------------------------
GOOD = {
    "rust/ownership.md": "# Ownership\n\nEvery value in Rust has a single owner; moving transfers it.\n",
    "cooking/bread.md": "# Sourdough\n\nFeed the starter, then bake the loaf in a hot dutch oven.\n",
}


@pytest.fixture
def good_notes(root, note):
    for rel, text in GOOD.items():
        note(rel, text)
    return root


def _assert_nothing_else_lost(engine, report: IndexReport) -> None:
    files = engine.store.files()
    for rel in GOOD:
        assert rel in files and files[rel].hash is not None and files[rel].error is None
        assert engine.store.file_chunks(rel), rel
    assert engine.search("single owner of a value", limit=1).hits[0].path == "rust/ownership.md"
    assert engine.search("bake bread in a dutch oven", limit=1).hits[0].path == "cooking/bread.md"


def _reason(report: IndexReport, rel: str) -> str:
    reasons = [s.reason for s in report.skipped if s.path == rel]
    assert reasons, f"{rel} not reported; skipped={report.skipped}"
    return reasons[0]


def test_a_binary_file_is_skipped_with_a_reason(good_notes, make_engine):
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10" + bytes(range(256)) * 4
    (good_notes / "diagram.md").write_bytes(png)
    engine = make_engine(good_notes)
    report = engine.index()
    assert "binary" in _reason(report, "diagram.md")
    assert not engine.store.file_chunks("diagram.md")
    assert ("diagram.md", _reason(report, "diagram.md")) in [(e.path, e.reason) for e in engine.status().errors]
    _assert_nothing_else_lost(engine, report)


def test_invalid_utf8_is_indexed_with_a_reason(good_notes, make_engine):
    (good_notes / "latin1.md").write_bytes("# Crème brûlée\n\nCaramelised custard dessert, très bon.\n".encode("latin-1"))
    engine = make_engine(good_notes)
    report = engine.index()
    assert "invalid UTF-8" in _reason(report, "latin1.md")
    assert engine.store.file_chunks("latin1.md")
    assert engine.search("caramelised custard dessert", mode="lexical", limit=1).hits[0].path == "latin1.md"
    _assert_nothing_else_lost(engine, report)


def test_nul_bytes_in_a_text_file_are_skipped_with_a_reason(good_notes, make_engine):
    (good_notes / "nul.md").write_bytes(b"# Looks like text\n\nbut has a \x00 NUL byte inside.\n")
    engine = make_engine(good_notes)
    report = engine.index()
    assert "NUL" in _reason(report, "nul.md")
    _assert_nothing_else_lost(engine, report)


def test_an_empty_file_is_indexed_with_no_chunks(good_notes, make_engine):
    (good_notes / "empty.md").write_bytes(b"")
    (good_notes / "blank.txt").write_text("\n\n   \n")
    engine = make_engine(good_notes)
    report = engine.index()
    files = engine.store.files()
    assert files["empty.md"].hash is not None and files["empty.md"].error is None
    assert engine.store.file_chunks("empty.md") == [] and engine.store.file_chunks("blank.txt") == []
    assert engine.index().embedded == 0  # and it is not re-read as "changed" every time
    _assert_nothing_else_lost(engine, report)


def test_a_file_over_the_size_limit_is_skipped_with_a_reason(good_notes, make_engine):
    (good_notes / "huge.md").write_text("# Huge\n\n" + "lorem ipsum dolor sit amet " * 200)
    engine = make_engine(good_notes, config=Config(max_file_bytes=2000))
    report = engine.index()
    assert "max_file_bytes" in _reason(report, "huge.md")
    assert not engine.store.file_chunks("huge.md")
    _assert_nothing_else_lost(engine, report)


def test_a_changed_size_limit_is_applied_to_unchanged_files(good_notes, make_engine, tmp_path):
    """Raising max_file_bytes indexes the file it skipped; lowering it skips one it indexed (its
    last chunks stay searchable, as for any skip), though the file was not touched (the scan
    skips files whose size and mtime did not change)."""
    (good_notes / "huge.md").write_text("# Huge\n\nGlacier crampons and an ice axe. " + "lorem ipsum " * 200)
    store = tmp_path / "one-store"
    small = make_engine(good_notes, config=Config(max_file_bytes=2000), store_dir=store)
    assert "max_file_bytes" in _reason(small.index(), "huge.md")
    small.close()
    large = make_engine(good_notes, config=Config(max_file_bytes=100_000), store_dir=store)
    report = large.index()
    assert not [s for s in report.skipped if s.path == "huge.md"] and large.store.file_chunks("huge.md")
    assert large.search("glacier crampons", mode="lexical", limit=1).hits[0].path == "huge.md"
    assert large.index().embedded == 0 and not large.index().skipped  # settled: not re-read again
    large.close()
    small = make_engine(good_notes, config=Config(max_file_bytes=2000), store_dir=store)
    assert "max_file_bytes" in _reason(small.index(), "huge.md")
    assert "max_file_bytes" in dict(small.store.errors())["huge.md"]
    assert not small.index().skipped  # settled: not re-read at every scan


def test_malformed_frontmatter_is_indexed_with_a_reason(good_notes, make_engine):
    (good_notes / "bad-yaml.md").write_text("---\ntitle: [oops\ntags: x\n---\n# Glacier hiking\n\nCrampons and an ice axe.\n")
    engine = make_engine(good_notes)
    report = engine.index()
    assert "frontmatter" in _reason(report, "bad-yaml.md")
    assert engine.search("crampons ice axe", mode="lexical", limit=1).hits[0].path == "bad-yaml.md"
    _assert_nothing_else_lost(engine, report)


def test_frontmatter_with_an_impossible_date_is_indexed_with_a_reason(good_notes: Path, make_engine: MakeEngine) -> None:
    # `date: 2024-02-30` made PyYAML raise ValueError: the whole note was skipped ("cannot parse").
    # Front matter scalars are text since CHUNKING_VERSION 5: only an explicit tag builds a date.
    (good_notes / "trip.md").write_text(
        "---\ndate: !!timestamp 2024-02-30\ntags: [trip]\n---\n# Glacier trip\n\nCrampons and an ice axe.\n"
    )
    engine = make_engine(good_notes)
    report = engine.index()
    assert _reason(report, "trip.md").startswith("indexed with a problem: frontmatter:")
    assert engine.search("crampons ice axe", mode="lexical", limit=1).hits[0].path == "trip.md"
    _assert_nothing_else_lost(engine, report)


def test_a_note_an_older_kbls_could_not_parse_is_read_again_by_the_next_full_scan(
    good_notes: Path, make_engine: MakeEngine
) -> None:
    # What a kbls whose parser raised on this note recorded (same size and mtime): the note must
    # not wait for an edit once a fixed kbls runs.
    engine = make_engine(good_notes)
    engine.index()  # the store's chunking is recorded: the next scan re-reads only what changed
    note = good_notes / "trip.md"
    note.write_text("---\ndate: 2024-02-30\n---\n# Glacier trip\n\nCrampons and an ice axe.\n")
    st = note.stat()
    engine.store.record_problem("trip.md", "cannot parse: ValueError: day is out of range for month", st.st_size, st.st_mtime_ns)
    engine.index()
    assert engine.store.file_chunks("trip.md")
    assert engine.search("crampons ice axe", mode="lexical", limit=1).hits[0].path == "trip.md"


def test_a_symlink_pointing_outside_the_root_is_skipped_with_a_reason(good_notes, tmp_path, make_engine):
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nThe vault combination is hummingbird.\n")
    (good_notes / "link.md").symlink_to(secret)
    (good_notes / "shared").mkdir()
    (good_notes / "shared" / "glossary.md").write_text("# Glossary\n\nTerms and their meanings.\n")
    (good_notes / "inside-link.md").symlink_to(good_notes / "shared" / "glossary.md")
    engine = make_engine(good_notes)
    report = engine.index()
    assert "outside" in _reason(report, "link.md")
    assert not engine.store.file_chunks("link.md")
    assert not engine.search("hummingbird vault combination", mode="lexical").hits
    assert engine.store.file_chunks("inside-link.md")  # a link inside the root is followed
    _assert_nothing_else_lost(engine, report)


def test_a_file_under_a_symlinked_folder_outside_the_root_is_not_read(good_notes, tmp_path, make_engine):
    """The walk does not enter symlinked folders, but a save or a watcher event can hand in
    `linkdir/secret.md` directly; the folder on the way leads out of the root all the same."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nThe vault combination is hummingbird.\n")
    (good_notes / "linkdir").symlink_to(outside)
    engine = make_engine(good_notes)
    engine.index()
    report = engine.index([good_notes / "linkdir" / "secret.md"])
    assert "outside" in _reason(report, "linkdir/secret.md")
    assert not engine.store.file_chunks("linkdir/secret.md")
    assert not engine.search("hummingbird vault combination", mode="lexical").hits
    _assert_nothing_else_lost(engine, report)


def test_a_root_opened_through_a_symlink_accepts_its_own_paths(good_notes, tmp_path, make_engine):
    """An editor may open the workspace as /link/kb; the engine resolves its root, and the
    paths it is then given (under /link/kb) are still inside that root."""
    link = tmp_path / "link-to-notes"
    link.symlink_to(good_notes)
    engine = make_engine(link)
    engine.index()
    (good_notes / "rust" / "ownership.md").write_text("# Ownership\n\nA value has one owner at a time; edited.\n")
    report = engine.index([link / "rust" / "ownership.md"])
    assert report.skipped == [] and report.changed == 1
    assert engine.related(link / "rust" / "ownership.md") is not None


def test_a_dangling_symlink_is_skipped_with_a_reason(good_notes, make_engine):
    """A link whose target was moved away: not indexed, said so, the run goes on."""
    (good_notes / "moved.md").symlink_to(good_notes / "no-longer-here.md")
    engine = make_engine(good_notes)
    report = engine.index()
    assert "target does not exist" in _reason(report, "moved.md")
    assert not engine.store.file_chunks("moved.md")
    _assert_nothing_else_lost(engine, report)


def test_a_symlink_loop_is_skipped_with_a_reason(good_notes, make_engine):
    """A file that cannot be read even by root: stat() fails with ELOOP."""
    (good_notes / "loop-a.md").symlink_to(good_notes / "loop-b.md")
    (good_notes / "loop-b.md").symlink_to(good_notes / "loop-a.md")
    engine = make_engine(good_notes)
    report = engine.index()
    assert "cannot stat" in _reason(report, "loop-a.md")
    _assert_nothing_else_lost(engine, report)


def test_an_unreadable_file_is_skipped_with_a_reason(make_engine):
    """A regular file the indexing user may not read (mode 000, owned by another user)."""
    if not hasattr(os, "geteuid"):
        pytest.skip("POSIX permissions only")
    base = Path(tempfile.mkdtemp(prefix="kbls-perm-"))  # not under tmp_path: its parents are 0700 root
    try:
        root = base / "notes"
        for rel, text in GOOD.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        (base / "store").mkdir()
        locked = root / "locked.md"
        locked.write_text("# Locked\n\nThe password manager export.\n")
        if os.geteuid() == 0:
            for path in [base, *base.rglob("*")]:
                os.chown(path, 65534, 65534)
            os.chown(locked, 0, 0)
        locked.chmod(0)
        with filesystem_uid(65534):
            try:
                locked.open("rb").close()
            except PermissionError:
                pass
            else:
                pytest.skip("this system lets the indexing user read a mode-000 file")
            engine = make_engine(root, store_dir=base / "store")
            report = engine.index()
            assert "cannot read" in _reason(report, "locked.md")
            assert "Permission denied" in _reason(report, "locked.md")
            _assert_nothing_else_lost(engine, report)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_folder_that_cannot_be_listed_keeps_its_notes(make_engine: MakeEngine) -> None:
    """A folder (or the root) the indexing user may not list, or that fails with an I/O error:
    os.walk passed over it silently, so the full scan took its notes for deleted and dropped
    them and their vectors (a permission slip or a flaky mount emptied the index)."""
    if not hasattr(os, "geteuid"):
        pytest.skip("POSIX permissions only")
    base = Path(tempfile.mkdtemp(prefix="kbls-perm-"))  # not under tmp_path: its parents are 0700 root
    try:
        root = base / "notes"
        for rel, text in {**GOOD, "private/rescue.md": "# Rescue\n\nCrevasse rescue with a pulley.\n"}.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        (base / "store").mkdir()
        if os.geteuid() == 0:
            for path in [base, *base.rglob("*")]:
                os.chown(path, 65534, 65534)
        with filesystem_uid(65534):
            engine = make_engine(root, store_dir=base / "store")
            engine.index()
            assert engine.store.file_chunks("private/rescue.md")
        for folder in (root / "private", root):
            if os.geteuid() == 0:
                os.chown(folder, 0, 0)
            folder.chmod(0)
            with filesystem_uid(65534):
                try:
                    os.listdir(folder)
                except PermissionError:
                    pass
                else:
                    pytest.skip("this system lets the indexing user list a mode-000 folder")
                report = engine.index()
                shown = "./" if folder == root else "private/"
                assert "cannot list" in _reason(report, shown) and "Permission denied" in _reason(report, shown)
                assert report.deleted == 0
                assert engine.store.file_chunks("private/rescue.md")
                assert engine.search("crevasse rescue pulley", mode="lexical", limit=1).hits[0].path == "private/rescue.md"
                _assert_nothing_else_lost(engine, report)
    finally:
        for folder in (root, root / "private"):
            folder.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_a_fifo_named_like_a_note_does_not_hang_the_run(good_notes, make_engine):
    """Opening a FIFO blocks until a writer comes; the indexer must never open one."""
    fifo = good_notes / "pipe.md"
    os.mkfifo(fifo)
    engine = make_engine(good_notes)
    report = run_beside_fifo(engine.index, fifo, "index()")
    assert "not a regular file" in _reason(report, "pipe.md")
    assert not engine.store.file_chunks("pipe.md")
    _assert_nothing_else_lost(engine, report)


def test_a_note_swapped_for_a_fifo_after_the_scan_does_not_hang_the_run(good_notes: Path, make_engine: MakeEngine) -> None:
    """The scan stats a regular file; if a FIFO takes its name before it is read, `open` blocked
    the run (and with it the daemon's indexing of the root) until some writer came."""
    (good_notes / "zz-swapped.md").write_text("# Swapped\n\nsoon a pipe\n")
    engine = make_engine(good_notes)
    fifo = good_notes / "zz-swapped.md"

    def swap(progress: IndexProgress) -> None:
        if progress.path == "rust/ownership.md":  # listed already; the next files are read after this
            fifo.unlink()
            os.mkfifo(fifo)

    report = run_beside_fifo(lambda: engine.index(progress=swap), fifo, "index() with a FIFO swapped in after the scan")
    assert "not a regular file" in _reason(report, "zz-swapped.md")
    assert not engine.store.file_chunks("zz-swapped.md")
    _assert_nothing_else_lost(engine, report)


def test_a_note_turning_binary_keeps_its_last_good_chunks(good_notes, make_engine):
    """record_problem: a file that becomes unreadable keeps its previous chunks searchable."""
    engine = make_engine(good_notes)
    engine.index()
    (good_notes / "rust" / "ownership.md").write_bytes(b"\x00\x01\x02 corrupted by a bad sync")
    report = engine.index()
    assert "binary" in _reason(report, "rust/ownership.md")
    assert engine.store.file_chunks("rust/ownership.md")
    assert engine.search("single owner of a value", limit=1).hits[0].path == "rust/ownership.md"


def test_a_renamed_note_without_a_title_embeds_nothing(root, note, make_engine, count_embedded):
    path = note("idea.md", "A note with no heading and no frontmatter, only this paragraph of text.\n")
    engine = make_engine(root)
    counter = count_embedded(engine)
    engine.index()
    counter.take()
    path.rename(root / "better-name.md")
    engine.index()
    assert counter.take() == []


# -- running the indexer ---------------------------------------------------------------------
def test_a_second_writer_gets_busy_instead_of_waiting(root, note, make_engine, tmp_path):
    note("a.md", "# A\n\nalpha\n")
    first = make_engine(root, store_dir=tmp_path / "shared")
    second = make_engine(root, store_dir=tmp_path / "shared")
    with first.store.lock.hold() as held:
        assert held
        report = second.index(wait=False)
    assert report.busy and report.changed == 0
    assert second.index(wait=False).changed == 1


def test_kbls_index_says_it_waits_for_another_writer(root: Path, note: WriteNote, tmp_path: Path) -> None:
    """`kbls index` waited on the store's writer lock without a word (a daemon indexing, or a
    `kbls index` stopped with Ctrl+Z): it looked hung."""
    import fcntl
    import select
    import subprocess
    import time

    from tests.support.processes import KBLS, child_env

    note("a.md", "# A\n\nalpha\n")
    store = tmp_path / "shared"
    store.mkdir()
    with open(store / "writer.lock", "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # as another process writing the store
        proc = subprocess.Popen(
            [str(KBLS), "index", "--root", str(root), "--store", str(store)],
            stderr=subprocess.PIPE, text=True, env=child_env(tmp_path),
        )
        try:
            assert proc.stderr is not None
            deadline, said = time.monotonic() + 120, ""
            while "waiting for it to finish" not in said and time.monotonic() < deadline:
                if select.select([proc.stderr], [], [], 1.0)[0]:
                    said += proc.stderr.readline()
                assert proc.poll() is None, said
            assert "another kbls process is writing the store" in said and str(store) in said, said
        except BaseException:
            proc.kill()
            raise
    _, rest = proc.communicate(timeout=300)  # the lock is released: it goes on and finishes
    assert proc.returncode == 0 and "1 files written" in rest, rest


def test_ctrl_c_during_kbls_index_says_what_is_kept(root: Path, note: WriteNote, tmp_path: Path) -> None:
    """Ctrl-C left `kbls index` silent (exit 130, no word on what was kept)."""
    import fcntl
    import select
    import signal
    import subprocess
    import time

    from tests.support.processes import KBLS, assert_no_traceback, child_env

    note("a.md", "# A\n\nalpha\n")
    store = tmp_path / "shared"
    store.mkdir()
    with open(store / "writer.lock", "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # holds it in a known place: waiting for the lock
        proc = subprocess.Popen(
            [str(KBLS), "index", "--root", str(root), "--store", str(store)],
            stderr=subprocess.PIPE, text=True, env=child_env(tmp_path),
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal's job
        )
        assert proc.stderr is not None
        deadline, said = time.monotonic() + 120, ""
        while "waiting for it to finish" not in said and time.monotonic() < deadline and proc.poll() is None:
            if select.select([proc.stderr], [], [], 1.0)[0]:
                said += proc.stderr.readline()
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=60)
    assert_no_traceback(subprocess.CompletedProcess([], proc.returncode, "", said + rest))
    assert proc.returncode == 130 and "interrupted; the notes indexed so far are kept" in rest, said + rest


def test_a_cancelled_run_writes_nothing_and_the_next_run_catches_up(root, note, make_engine):
    for i in range(5):
        note(f"n{i}.md", f"# Note {i}\n\nbody of note {i}\n")
    engine = make_engine(root)
    cancel = threading.Event()
    cancel.set()
    report = engine.index(cancel=cancel)
    assert report.changed == 0 and engine.store.files() == {}
    assert engine.index().changed == 5


def test_search_falls_back_to_lexical_while_the_model_is_not_loaded(root, note, make_engine, tmp_path):
    from kbls.indexing.embed import Embedder

    note("a.md", "# Kettle\n\nDescale the kettle with vinegar.\n")
    make_engine(root, store_dir=tmp_path / "shared").index()
    cold = make_engine(root, store_dir=tmp_path / "shared", load_model_on_demand=False)
    cold.embedder = Embedder()  # a fresh, unloaded model: what a daemon has right after start
    result = cold.search("kettle vinegar")
    assert result.mode == "lexical" and [h.path for h in result.hits] == ["a.md"]
    assert not cold.embedder.loaded
