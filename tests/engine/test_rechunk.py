"""A store built under another chunking (an older parser/chunker, other chunk settings) is
re-chunked by the next full scan: every note re-read, only new chunk texts embedded, the
fingerprint (meta `chunking`) recorded once the scan completes. Real store, real model."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.model import EmbedCounter

from kbls.config import ChunkConfig, Config
from kbls.engine import Engine
from kbls.indexing import chunk as chunk_module
from kbls.indexing.chunk import Chunker
from kbls.indexing.embed import Embedder
from kbls.indexing.parse import parse_note

MakeEngine = Callable[..., Engine]
CountEmbedded = Callable[[Engine], EmbedCounter]

RECHUNK_LINE = "chunking changed since this store was built: re-reading every note"


def _paragraph(topic: str, sentences: int) -> str:
    return " ".join(f"The {topic} note sentence {i} explains one more detail of {topic}." for i in range(sentences))


#: headed notes (breadcrumb "Title > Section"), a note whose title is its file name and has no
#: heading (its embedded text is its body alone), and a long section that splits by budget.
NOTES = {
    "garden.md": f"# Garden\n\n## Tomatoes\n\n{_paragraph('tomato', 6)}\n\n## Compost\n\n{_paragraph('compost', 6)}\n",
    "kitchen.md": f"# Kitchen\n\n## Knives\n\n{_paragraph('knife', 6)}\n",
    "scratch.md": f"{_paragraph('scratch', 4)}\n",
    "long.md": "# Long\n\n## Everything\n\n"
    + "\n\n".join(_paragraph(f"everything {k}", 6) for k in range(5))
    + f"\n\n## Short\n\n{_paragraph('short', 5)}\n",
}


@pytest.fixture
def notes(root: Path) -> Path:
    for rel, text in NOTES.items():
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _stored(engine: Engine) -> dict[str, list[tuple[int, int, str, str]]]:
    """Each file's chunks as stored: (start line, end line, breadcrumb, body), in file order."""
    rows = engine.store.conn.execute(
        "SELECT f.path, c.start_line, c.end_line, c.breadcrumb, c.body FROM chunks c "
        "JOIN files f ON f.id = c.file_id ORDER BY f.path, c.ord"
    ).fetchall()
    out: dict[str, list[tuple[int, int, str, str]]] = {}
    for path, start, end, breadcrumb, body in rows:
        out.setdefault(path, []).append((start, end, breadcrumb, body))
    return out


def _expected(chunker: Chunker) -> tuple[dict[str, list[tuple[int, int, str, str]]], set[str]]:
    """What `chunker` makes of NOTES: the rows `_stored` reads back, and the embedded texts."""
    rows: dict[str, list[tuple[int, int, str, str]]] = {}
    texts: set[str] = set()
    for rel, text in NOTES.items():
        chunks = chunker.chunk(parse_note(rel, text))
        rows[rel] = [(c.start_line, c.end_line, c.breadcrumb, c.body) for c in chunks]
        texts |= {c.text for c in chunks}
    return dict(sorted(rows.items())), texts


def test_a_new_chunking_version_re_chunks_every_note_and_embeds_only_new_texts(
    notes: Path,
    make_engine: MakeEngine,
    count_embedded: CountEmbedded,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine = make_engine(notes)
    first = engine.index()
    old_rows, old_texts = _expected(engine.chunker)
    assert _stored(engine) == old_rows
    old_fingerprint = engine.store.chunking()
    assert old_fingerprint == engine.chunker.fingerprint

    # The chunker's output changes (here: the breadcrumb separator)...
    monkeypatch.setattr(chunk_module, "BREADCRUMB_SEP", " / ")
    # ...without a version bump the store keeps the old chunks: the version is the contract.
    assert engine.index().changed == 0 and _stored(engine) == old_rows

    monkeypatch.setattr(chunk_module, "CHUNKING_VERSION", chunk_module.CHUNKING_VERSION + 1)
    assert engine.chunker.fingerprint != old_fingerprint
    new_rows, new_texts = _expected(engine.chunker)
    assert new_rows != old_rows and {"Garden / Compost", "Long / Everything"} <= {
        row[2] for rows in new_rows.values() for row in rows
    }
    counter = count_embedded(engine)
    with caplog.at_level(logging.WARNING, logger="kbls.indexing.pipeline"):
        report = engine.index()
    assert [r.message for r in caplog.records if RECHUNK_LINE in r.message] != []
    assert report.changed == len(NOTES) == report.scanned
    assert _stored(engine) == new_rows
    embedded = counter.take()
    # Only the texts that changed went to the model: scratch.md (no breadcrumb) kept its vector.
    assert sorted(embedded) == sorted(new_texts - old_texts) and embedded
    assert report.embedded == len(embedded) and report.reused == report.chunks - len(embedded) > 0
    assert engine.store.chunking() == engine.chunker.fingerprint
    # Old vectors no chunk uses are gone; every chunk has its vector.
    assert report.chunks == first.chunks and engine.store.counts().vectors == len(new_texts)

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kbls.indexing.pipeline"):
        again = engine.index()
    assert again.changed == 0 and again.embedded == 0 and len(counter.take()) == 0
    assert not [r for r in caplog.records if RECHUNK_LINE in r.message]


def test_a_changed_chunk_setting_re_chunks_every_note_as_a_fresh_store_would(
    notes: Path, make_engine: MakeEngine, count_embedded: CountEmbedded, tmp_path: Path
) -> None:
    store = tmp_path / "shared-store"
    before = make_engine(notes, store_dir=store)
    before.index()
    old_rows, old_texts = _expected(before.chunker)
    assert _stored(before) == old_rows
    before.close()

    smaller = Config(chunk=ChunkConfig(max_tokens=96, overlap_tokens=16, min_tokens=24))
    after = make_engine(notes, store_dir=store, config=smaller)
    assert after.chunker.fingerprint != before.chunker.fingerprint
    counter = count_embedded(after)
    report = after.index()
    new_rows, new_texts = _expected(after.chunker)
    # The long section splits into more, shorter chunks: other line ranges.
    assert len(new_rows["long.md"]) > len(old_rows["long.md"])
    assert {(r[0], r[1]) for r in new_rows["long.md"]} != {(r[0], r[1]) for r in old_rows["long.md"]}
    assert report.changed == len(NOTES) and _stored(after) == new_rows
    embedded = counter.take()
    assert sorted(embedded) == sorted(new_texts - old_texts) and embedded
    assert len(embedded) < len(new_texts)  # the short sections' chunks are the same texts: reused

    fresh = make_engine(notes, config=smaller)  # a store of its own
    fresh.index()
    assert _stored(fresh) == _stored(after)
    assert after.index().changed == 0


def test_an_old_store_without_a_fingerprint_is_re_chunked_once(
    notes: Path, make_engine: MakeEngine, count_embedded: CountEmbedded, caplog: pytest.LogCaptureFixture
) -> None:
    engine = make_engine(notes)
    engine.index()
    rows = _stored(engine)
    with engine.store.db.atomic() as c:  # what a store written by an earlier kbls holds
        c.execute("DELETE FROM meta WHERE key = 'chunking'")
    assert engine.store.chunking() is None

    counter = count_embedded(engine)
    with caplog.at_level(logging.WARNING, logger="kbls.indexing.pipeline"):
        report = engine.index()
    assert [r for r in caplog.records if RECHUNK_LINE in r.message and "unrecorded" in r.message]
    assert report.changed == len(NOTES) and report.embedded == 0 and counter.take() == []
    assert _stored(engine) == rows and engine.store.chunking() == engine.chunker.fingerprint
    assert engine.index().changed == 0


def test_a_new_store_records_its_fingerprint_without_announcing_a_re_chunk(
    notes: Path, make_engine: MakeEngine, caplog: pytest.LogCaptureFixture
) -> None:
    engine = make_engine(notes)
    with caplog.at_level(logging.WARNING, logger="kbls.indexing.pipeline"):
        report = engine.index()
    assert report.changed == len(NOTES)
    assert not [r for r in caplog.records if RECHUNK_LINE in r.message]
    assert engine.store.chunking() == engine.chunker.fingerprint


def _indexed_then_new_chunker(
    notes: Path, make_engine: MakeEngine, monkeypatch: pytest.MonkeyPatch
) -> tuple[Engine, str | None]:
    """An engine whose store was indexed, then a chunker of the next version (breadcrumbs joined
    by " / "), and the fingerprint the store recorded before."""
    engine = make_engine(notes)
    engine.index()
    old_fingerprint = engine.store.chunking()
    monkeypatch.setattr(chunk_module, "BREADCRUMB_SEP", " / ")
    monkeypatch.setattr(chunk_module, "CHUNKING_VERSION", chunk_module.CHUNKING_VERSION + 1)
    return engine, old_fingerprint


def test_an_interrupted_re_chunk_keeps_the_old_fingerprint_and_the_next_scan_finishes_it(
    notes: Path, make_engine: MakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, old_fingerprint = _indexed_then_new_chunker(notes, make_engine, monkeypatch)

    cancel = threading.Event()
    interrupted = engine.index(progress=lambda progress: cancel.set(), cancel=cancel)
    assert cancel.is_set() and 0 < interrupted.changed < len(NOTES)
    assert engine.store.chunking() == old_fingerprint

    # Files the cancelled run did not reach (unchanged on disk) are re-read by the next full scan.
    finished = engine.index()
    assert finished.changed == len(NOTES)
    assert _stored(engine) == _expected(engine.chunker)[0]
    assert engine.store.chunking() == engine.chunker.fingerprint


def test_saving_one_note_re_chunks_it_but_leaves_the_rest_to_the_full_scan(
    notes: Path, make_engine: MakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, old_fingerprint = _indexed_then_new_chunker(notes, make_engine, monkeypatch)

    (notes / "garden.md").write_text(NOTES["garden.md"] + "\nOne more line.\n", encoding="utf-8")
    assert engine.index([notes / "garden.md"]).changed == 1
    stored = _stored(engine)
    assert "Garden / Compost" in [row[2] for row in stored["garden.md"]]
    assert "Long > Everything" in [row[2] for row in stored["long.md"]]  # not saved: old chunks
    assert engine.store.chunking() == old_fingerprint
    assert engine.index().changed == len(NOTES)
    assert engine.store.chunking() == engine.chunker.fingerprint


def test_read_only_opens_never_record_a_fingerprint(
    notes: Path, make_engine: MakeEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "shared-store"
    writer = make_engine(notes, store_dir=store)
    writer.index()
    old_fingerprint = writer.store.chunking()
    writer.close()
    monkeypatch.setattr(chunk_module, "CHUNKING_VERSION", chunk_module.CHUNKING_VERSION + 1)

    reader = make_engine(notes, store_dir=store, read_only=True)
    assert reader.search("tomato", mode="hybrid").hits
    assert reader.status().files == len(NOTES)
    reader.close()
    with sqlite3.connect(store / "kbls.sqlite3") as raw:
        assert raw.execute("SELECT value FROM meta WHERE key = 'chunking'").fetchone() == (old_fingerprint,)


def test_the_fingerprint_follows_the_effective_settings(tokenizer_only: Embedder) -> None:
    default = Chunker(tokenizer_only).fingerprint
    assert default.startswith(f"{chunk_module.CHUNKING_VERSION}:")
    assert Chunker(tokenizer_only, ChunkConfig()).fingerprint == default
    for changed in (ChunkConfig(max_tokens=128), ChunkConfig(overlap_tokens=0), ChunkConfig(min_tokens=0)):
        assert Chunker(tokenizer_only, changed).fingerprint != default
    # The model's limit (256 tokens for MiniLM) clamps max_tokens: above it nothing changes.
    assert (
        Chunker(tokenizer_only, ChunkConfig(max_tokens=512)).fingerprint
        == Chunker(tokenizer_only, ChunkConfig(max_tokens=1024)).fingerprint
    )
