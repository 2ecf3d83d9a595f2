"""The SQLite store: its meta table, the model guard and one transaction per file update.

The atomicity tests write records with random unit vectors: only store logic is under test.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from kbls.engine import Engine
from kbls.errors import ModelMismatchError
from kbls.indexing.embed import BUNDLED_SHA256, Embedder
from kbls.query.filters import Filters
from kbls.storage.connection import SQLITE
from kbls.storage.records import ChunkRecord, NoteRecord
from kbls.storage.schema import SCHEMA_VERSION
from kbls.storage.store import STORE_FILE, Store


def _meta(store_dir: Path) -> dict[str, str]:
    with sqlite3.connect(store_dir / STORE_FILE) as conn:
        return dict(conn.execute("SELECT key, value FROM meta"))


def test_meta_has_schema_version_model_id_dimension_and_sha256(
    tmp_path: Path, root: Path, note: Callable[[str, str], Path], make_engine: Callable[..., Engine], embedder: Embedder,
) -> None:
    note("a.md", "# A\n\nsome text\n")
    make_engine(root, store_dir=tmp_path / "store").index()
    meta = _meta(tmp_path / "store")
    assert meta["schema_version"] == str(SCHEMA_VERSION)
    assert meta["model_id"] == embedder.model_id and "all-MiniLM-L6-v2" in meta["model_id"]
    assert meta["dimension"] == "384"
    assert meta["model_sha256"] == BUNDLED_SHA256


def test_meta_sha256_is_recorded_when_the_store_is_created_before_the_model_loads(
    tmp_path: Path, root: Path, note: Callable[[str, str], Path],
) -> None:
    """The CLI and the daemon create the store with a fresh Embedder whose ONNX session is
    loaded only on first use; the store must still record the model file's sha256."""
    note("a.md", "# A\n\nsome text\n")
    engine = Engine(root, store_dir=tmp_path / "store", embedder=Embedder())
    try:
        engine.index()
    finally:
        engine.close()
    assert _meta(tmp_path / "store")["model_sha256"] == BUNDLED_SHA256


def test_a_store_of_another_model_raises_model_mismatch(
    tmp_path: Path, root: Path, note: Callable[[str, str], Path], make_engine: Callable[..., Engine],
) -> None:
    note("a.md", "# A\n\nsome text\n")
    make_engine(root, store_dir=tmp_path / "store").index()
    with pytest.raises(ModelMismatchError, match="rebuild"):
        Store(tmp_path / "store", model_id="BAAI/bge-small-en-v1.5", dimension=384, model_sha256=None)
    with pytest.raises(ModelMismatchError):
        Store(tmp_path / "store", model_id=_meta(tmp_path / "store")["model_id"], dimension=768, model_sha256=None)


def test_an_engine_with_another_model_id_refuses_the_store(
    tmp_path: Path, root: Path, note: Callable[[str, str], Path], make_engine: Callable[..., Engine],
) -> None:
    note("a.md", "# A\n\nsome text\n")
    make_engine(root, store_dir=tmp_path / "store").index()
    other = Embedder()
    other.model_id = "intfloat/multilingual-e5-small"
    with pytest.raises(ModelMismatchError):
        Engine(root, store_dir=tmp_path / "store", embedder=other)
    assert _meta(tmp_path / "store")["model_id"] != other.model_id  # the store was left alone


# -- one transaction per file ---------------------------------------------------------------
def _vector(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
    unit: np.ndarray = v / np.linalg.norm(v)
    return unit


def _record(path: str, bodies: list[str], tags: list[str], version: str) -> NoteRecord:
    chunks = [
        ChunkRecord(chunk_id=f"{path}-{version}-{i}", ord=i, hash=f"{version}-{body}", start_line=i, end_line=i,
                    breadcrumb=path, body=body)
        for i, body in enumerate(bodies)
    ]
    return NoteRecord(path=path, hash=version, size=1, mtime_ns=1, title=path, kind="md", note_type=None,
                      aliases=[], tags=tags, links=[("wiki", "Other")], chunks=chunks, warning=None)


def _snapshot(store: Store, path: str) -> tuple[object, ...]:
    files = store.files()
    file_id = files[path].id
    fts = store.conn.execute(
        "SELECT count(*) FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)", (file_id,)
    ).fetchone()[0]
    return (
        files[path].hash,
        [(c.breadcrumb, c.start_line) for c in store.file_chunks(path)],
        # the tags as a search sees them: which tag filters keep the file
        [tag for tag in ("one", "two") if store.first_chunks_matching(Filters(tags=(tag,)), 5)],
        store.outgoing_links(file_id),
        fts,
        store.counts().vectors,
    )


def test_a_failing_file_update_leaves_the_old_rows_whole(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", model_id="test", dimension=384, model_sha256=None)
    old = _record("a.md", ["alpha", "beta"], ["one"], "v1")
    store.write_note(old, {c.hash: _vector(i) for i, c in enumerate(old.chunks)})
    before = _snapshot(store, "a.md")

    new = _record("a.md", ["gamma", "delta", "epsilon"], ["two"], "v2")
    vectors = {new.chunks[0].hash: _vector(10)}  # the second new chunk has no vector: fails midway
    with pytest.raises(KeyError):
        store.write_note(new, vectors)
    assert _snapshot(store, "a.md") == before
    assert store.lexical('"alpha"', Filters(), 5) and not store.lexical('"gamma"', Filters(), 5)
    store.close()


def test_a_reader_never_sees_half_a_file_update(tmp_path: Path) -> None:
    """While one transaction replaces a file's chunks, another connection sees the old rows."""
    store = Store(tmp_path / "store", model_id="test", dimension=384, model_sha256=None)
    old = _record("a.md", ["alpha", "beta"], ["one"], "v1")
    store.write_note(old, {c.hash: _vector(i) for i, c in enumerate(old.chunks)})
    reader = sqlite3.connect(tmp_path / "store" / STORE_FILE)
    seen = []
    with store.db.atomic() as c:
        c.execute("DELETE FROM chunks WHERE file_id = (SELECT id FROM files WHERE path = 'a.md')")
        seen.append(reader.execute("SELECT count(*) FROM chunks").fetchone()[0])
    seen.append(reader.execute("SELECT count(*) FROM chunks").fetchone()[0])
    reader.close()
    store.close()
    assert seen == [2, 0]



def test_a_version_1_store_is_migrated_in_place_and_re_embeds_nothing(
    root: Path, note: Callable[[str, str], Path], make_engine: Callable[..., Engine], tmp_path: Path,
) -> None:
    """Schema v2 added files.stem; a v1 store keeps its vectors and gains the column."""
    note("alpha.md", "# Alpha\n\nSee [[beta]] for the other half.\n")
    note("beta.md", "# Beta\n\nThe other half of the story.\n")
    store_dir = tmp_path / "v1"
    engine = make_engine(root, store_dir=store_dir)
    engine.index()
    engine.close()
    conn = SQLITE.connect(str(store_dir / STORE_FILE))
    conn.execute("DROP INDEX files_stem")
    conn.execute("ALTER TABLE files DROP COLUMN stem")
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()

    migrated = make_engine(root, store_dir=store_dir)
    assert migrated.notice is None  # migrated, not set aside
    meta = dict(migrated.store.conn.execute("SELECT key, value FROM meta"))
    assert meta["schema_version"] == str(SCHEMA_VERSION)
    assert migrated.index().embedded == 0
    related = migrated.related(root / "alpha.md")
    assert [h.path for h in related] == ["beta.md"]
    assert any("linked from here" in r for r in related[0].reasons)


def test_a_version_1_store_that_already_has_the_stem_column_is_migrated_too(
    root: Path, note: Callable[[str, str], Path], make_engine: Callable[..., Engine], tmp_path: Path,
) -> None:
    """Development builds of v1 had files.stem already: the migration must not trip on it."""
    note("alpha.md", "# Alpha\n\nalpha text\n")
    store_dir = tmp_path / "v1dev"
    make_engine(root, store_dir=store_dir).index()
    conn = SQLITE.connect(str(store_dir / STORE_FILE))
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    migrated = make_engine(root, store_dir=store_dir)
    assert migrated.notice is None
    assert migrated.index().embedded == 0
