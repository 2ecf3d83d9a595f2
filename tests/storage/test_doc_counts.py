"""The store's remembered document counts (`kbls.storage.fts.DocCounts`, issue 10 query cost):
a query's words are counted in the FTS5 vocabulary once until the store changes, and any change
is seen: a write by the searching connection, by another connection, by another process (`kbls
index` beside a daemon), a store emptied and refilled in place, a store file replaced.

The records carry random unit vectors: only the store's counting is under test.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from kbls.errors import StoreClosedError
from kbls.storage.records import ChunkRecord, NoteRecord
from kbls.storage.recovery import delete_store
from kbls.storage.store import Store


def _store(directory: Path) -> Store:
    return Store(directory, model_id="test", dimension=384, model_sha256=None)


def _note(path: str, *bodies: str) -> NoteRecord:
    chunks = [
        ChunkRecord(chunk_id=f"{path}-{i}", ord=i, hash=f"{path}-{body}", start_line=i, end_line=i,
                    breadcrumb="", body=body)
        for i, body in enumerate(bodies)
    ]
    return NoteRecord(path=path, hash=path, size=1, mtime_ns=1, title="", kind="md", note_type=None,
                      aliases=[], tags=[], links=[], chunks=chunks, warning=None)


def _write(store: Store, note: NoteRecord) -> None:
    rng = np.random.default_rng(len(note.chunks))
    store.write_note(note, {c.hash: rng.standard_normal(384).astype(np.float32) for c in note.chunks})


def _counting(traced: list[str]) -> list[str]:
    """The traced statements that count terms (FTS5 vocabulary) or chunks."""
    return [s for s in traced if "kb_vocab" in s or "count(*) FROM chunks" in s]


def test_counts_are_read_once_until_the_store_changes(tmp_path: Path) -> None:
    store = _store(tmp_path / "store")
    try:
        _write(store, _note("a.md", "rust ownership", "rust borrowing"))
        assert store.term_doc_counts({"rust", "ownership", "absent"}) == {"rust": 2, "ownership": 1}
        assert store.chunk_count() == 2
        traced: list[str] = []
        store.conn.set_trace_callback(traced.append)
        assert store.term_doc_counts({"rust", "absent"}) == {"rust": 2}  # absent: remembered too
        assert store.chunk_count() == 2
        assert _counting(traced) == []
        assert store.term_doc_counts({"rust", "borrowing"}) == {"rust": 2, "borrowing": 1}
        counted = _counting(traced)  # only the new word is counted
        assert len(counted) == 1 and "'borrowing'" in counted[0] and "'rust'" not in counted[0]
    finally:
        store.close()


def test_a_write_by_the_searching_connection_is_seen(tmp_path: Path) -> None:
    """The writer connection of a single-threaded process (`kbls index` then `kbls search`) is
    the one that reads: its own commits do not move its `PRAGMA data_version`."""
    store = _store(tmp_path / "store")
    try:
        _write(store, _note("a.md", "rust ownership"))
        assert store.term_doc_counts({"rust"}) == {"rust": 1} and store.chunk_count() == 1
        _write(store, _note("b.md", "rust traits", "more rust"))
        assert store.term_doc_counts({"rust", "traits"}) == {"rust": 3, "traits": 1}
        assert store.chunk_count() == 3
        store.delete_file("a.md")
        assert store.term_doc_counts({"rust", "ownership"}) == {"rust": 2}
        assert store.chunk_count() == 2
    finally:
        store.close()


def test_a_write_by_another_connection_is_seen(tmp_path: Path) -> None:
    reader, writer = _store(tmp_path / "store"), _store(tmp_path / "store")
    try:
        _write(writer, _note("a.md", "rust ownership"))
        assert reader.term_doc_counts({"rust", "traits"}) == {"rust": 1} and reader.chunk_count() == 1
        _write(writer, _note("b.md", "rust traits"))
        assert reader.term_doc_counts({"rust", "traits"}) == {"rust": 2, "traits": 1}
        assert reader.chunk_count() == 2
    finally:
        reader.close()
        writer.close()


def test_a_write_by_another_process_is_seen(tmp_path: Path) -> None:
    """`kbls index` writing the store beside a daemon that searches it."""
    store = _store(tmp_path / "store")
    try:
        _write(store, _note("a.md", "rust ownership"))
        assert store.term_doc_counts({"rust", "traits"}) == {"rust": 1} and store.chunk_count() == 1
        script = textwrap.dedent(f"""
            import sys
            sys.path.insert(0, {str(Path(__file__).parent)!r})
            from pathlib import Path
            from test_doc_counts import _note, _store, _write
            other = _store(Path({str(tmp_path / "store")!r}))
            _write(other, _note("b.md", "rust traits", "traits again"))
            other.close()
        """)
        subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
        assert store.term_doc_counts({"rust", "traits"}) == {"rust": 2, "traits": 2}
        assert store.chunk_count() == 3
    finally:
        store.close()


def test_a_store_emptied_and_refilled_in_place_is_seen(tmp_path: Path) -> None:
    reader, writer = _store(tmp_path / "store"), _store(tmp_path / "store")
    try:
        _write(writer, _note("a.md", "rust ownership", "rust"))
        assert reader.term_doc_counts({"rust", "kyoto"}) == {"rust": 2}
        writer.delete_file("a.md")
        writer.collect_garbage()
        _write(writer, _note("trip.md", "kyoto trains"))
        assert reader.term_doc_counts({"rust", "kyoto"}) == {"kyoto": 1} and reader.chunk_count() == 1
    finally:
        reader.close()
        writer.close()


def test_a_rebuilt_store_file_has_counts_of_its_own(tmp_path: Path) -> None:
    """`kbls index --rebuild` deletes the store file and writes a new one; a process notices
    (`Store.replaced`) and opens a new `Store`, which must not answer from the old counts."""
    old = _store(tmp_path / "store")
    _write(old, _note("a.md", "rust ownership"))
    assert old.term_doc_counts({"rust", "kyoto"}) == {"rust": 1}
    delete_store(tmp_path / "store")
    rebuilt = _store(tmp_path / "store")
    try:
        _write(rebuilt, _note("trip.md", "kyoto trains", "kyoto food"))
        assert old.replaced()
        new = _store(tmp_path / "store")
        try:
            assert new.term_doc_counts({"rust", "kyoto"}) == {"kyoto": 2} and new.chunk_count() == 2
        finally:
            new.close()
    finally:
        old.close()
        rebuilt.close()


def test_counts_read_inside_a_write_transaction_are_not_remembered(tmp_path: Path) -> None:
    store = _store(tmp_path / "store")
    try:
        _write(store, _note("a.md", "rust ownership"))
        assert store.term_doc_counts({"rust"}) == {"rust": 1}
        with pytest.raises(RuntimeError), store.db.atomic() as c:
            c.execute("INSERT INTO chunks_fts(rowid, title, breadcrumb, body) VALUES (99, '', '', 'rust rust')")
            assert store.term_doc_counts({"rust"}) == {"rust": 2}  # this transaction's own rows
            raise RuntimeError("rolled back")
        assert store.term_doc_counts({"rust"}) == {"rust": 1}
    finally:
        store.close()


def test_a_closed_store_refuses_reads_and_its_successor_counts_afresh(tmp_path: Path) -> None:
    """A closed store opens no connection again (a late read of a replaced store kept its file
    alive); a store opened on the same file counts what was written since."""
    store = _store(tmp_path / "store")
    _write(store, _note("a.md", "rust ownership"))
    assert store.term_doc_counts({"rust"}) == {"rust": 1}
    store.close()
    with pytest.raises(StoreClosedError):
        store.term_doc_counts({"rust"})
    again = _store(tmp_path / "store")
    try:
        _write(again, _note("b.md", "rust"))
        assert again.term_doc_counts({"rust"}) == {"rust": 2} and again.chunk_count() == 2
    finally:
        again.close()
