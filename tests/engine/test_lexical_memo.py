"""What a store's searches remember (`retrieval.lexical._Remembered`, issue 10 query cost): a
query's words, which candidates hold them and the candidates' rows are kept until the store
changes, and what is read from memory equals what is read and measured afresh: while a query is
typed, after a chunk is rewritten (its rowid used again), after a write by another connection;
inside a write transaction nothing is remembered.

The records carry random unit vectors: only lexical search is under test.
"""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest

from kbls.query.filters import Filters
from kbls.retrieval.lexical import LexicalRanker, QueryWords
from kbls.storage.records import ChunkRecord, NoteRecord
from kbls.storage.store import Store

NOTES = {
    "kitchen/kettle.md": ["Boil water in the kettle before the tea", "Descale the kettle with vinegar"],
    "kitchen/tea.md": ["Green tea wants water below boiling", "Black tea steeps four minutes"],
    "rust/borrow.md": ["A mutable borrow of a value excludes every other borrow", "Borrowing a value mutably"],
    "rust/threads.md": ["Spawn a thread and join it", "Threads share data through channels"],
    "trips/kyoto.md": ["Kyoto trains and buses", "The bullet train to Tokyo"],
}
TYPED = ["boil water kettle", "mutable borrow value", "kyoto trains tea"]


def _store(directory: Path) -> Store:
    return Store(directory, model_id="test", dimension=384, model_sha256=None)


def _write(store: Store, path: str, *bodies: str) -> None:
    chunks = [
        ChunkRecord(chunk_id=f"{path}-{i}", ord=i, hash=f"{path}-{body}", start_line=i, end_line=i,
                    breadcrumb="", body=body)
        for i, body in enumerate(bodies)
    ]
    note = NoteRecord(path=path, hash=f"{path}-{bodies}", size=1, mtime_ns=1, title="", kind="md", note_type=None,
                      aliases=[], tags=[], links=[], chunks=chunks, warning=None)
    rng = np.random.default_rng(len(chunks))
    store.write_note(note, {c.hash: rng.standard_normal(384).astype(np.float32) for c in chunks})


def _coverages(ranker: LexicalRanker, text: str) -> tuple[dict[int, float], dict[int, float]]:
    """(remembered, measured afresh) coverage of the query's candidates."""
    words = ranker.words(text)
    rowids = [rowid for rowid, _ in ranker.rank(words, Filters(), 50)]
    rows = ranker.chunk_rows(rowids)
    read = ranker.store.chunk_rows(rowids)
    assert list(rows.items()) == list(read.items())  # the same rows, in the same (rowid) order
    fresh = QueryWords.of(text, ranker.store)
    assert fresh.remembered is None and words.remembered is not None
    return words.chunk_coverages(rows.values()), fresh.chunk_coverages(read.values())


@pytest.fixture
def store(tmp_path: Path) -> Store:
    opened = _store(tmp_path / "store")
    for path, bodies in NOTES.items():
        _write(opened, path, *bodies)
    return opened


def test_while_a_query_is_typed_remembered_coverage_equals_measured(store: Store) -> None:
    ranker = LexicalRanker(store)
    try:
        for _ in range(2):  # the second time, all from memory
            for query in TYPED:
                for end in range(3, len(query) + 1):
                    remembered, measured = _coverages(ranker, query[:end])
                    assert remembered == measured, query[:end]
        assert ranker.words("mutable borrow value") is ranker.words("mutable borrow value")
        remembered, _ = _coverages(ranker, "mutable borrow value")
        assert max(remembered.values()) == 1.0 and min(remembered.values()) < 1.0
    finally:
        store.close()


def test_a_rewritten_chunk_is_measured_again(store: Store) -> None:
    """The last note's chunks are written again under the same rowids: what was remembered for
    them must not be read for the new text."""
    ranker = LexicalRanker(store)
    try:
        before, _ = _coverages(ranker, "bullet train tokyo")
        words = ranker.words("bullet train tokyo")
        rowids = set(before)
        _write(store, "trips/kyoto.md", "Kyoto trains and buses", "The bullet train to Osaka")
        assert ranker.words("bullet train tokyo") is not words  # the store changed
        after, measured = _coverages(ranker, "bullet train tokyo")
        assert after == measured
        assert max(before.values()) == 1.0 and max(after.values()) < 1.0
        assert rowids & set(after)  # (the rowids were used again: the case under test)
        assert [row.body for row in ranker.chunk_rows(sorted(rowids)).values()] == ["The bullet train to Osaka"]
    finally:
        store.close()


def test_a_write_by_another_connection_is_seen(store: Store, tmp_path: Path) -> None:
    writer = _store(tmp_path / "store")
    ranker = LexicalRanker(store)
    try:
        assert set(_coverages(ranker, "descale vinegar")[0].values()) == {1.0}
        _write(writer, "kitchen/kettle.md", "Boil water in the kettle", "Descale it with citric acid")
        remembered, measured = _coverages(ranker, "descale vinegar")
        assert remembered == measured and max(remembered.values()) < 1.0
    finally:
        writer.close()
        store.close()


def test_inside_a_write_transaction_nothing_is_remembered(store: Store) -> None:
    ranker = LexicalRanker(store)
    try:
        assert store.lexical_generation() is not None
        with store.db.atomic():
            assert store.lexical_generation() is None
            assert ranker.words("kettle").remembered is None
            assert ranker.chunk_rows([1]) == store.chunk_rows([1])
        assert ranker.words("kettle").remembered is not None
    finally:
        store.close()


def test_what_was_remembered_of_a_changed_store_is_freed_at_once(store: Store) -> None:
    """No reference cycle keeps an old memory (its rows, its holders) until Python's garbage
    collector runs: a daemon whose store changes often would collect every other search."""
    ranker = LexicalRanker(store)
    enabled = gc.isenabled()
    gc.disable()
    try:
        _coverages(ranker, "kettle tea")
        memory = ranker.words("kettle tea").remembered
        assert memory is not None and memory() is not None
        _write(store, "kitchen/tea.md", "Oolong tea")
        _coverages(ranker, "kettle tea")  # the store changed: a new memory
        assert memory() is None
    finally:
        if enabled:
            gc.enable()
        store.close()
