"""The store's writes: one transaction per file update, so a crash leaves the old rows or the
new ones, never half. Vectors are content-addressed by chunk-text hash (`embeddings`), so a
moved, renamed or copied note re-embeds nothing.

A note may be written before its vectors: a chunk text with no vector yet gets a pending mark
(`pending_embeddings`, holding the text to embed), and `fill_vectors` later swaps the mark for
the vector under a new embedding id. New ids only grow (AUTOINCREMENT), so an in-memory copy of
the vectors catches up by reading the ids above its last (`kbls.retrieval.vectors`).

`StoreWrites` is one half of `kbls.storage.store.Store` (the other is `StoreReads`).
"""

from __future__ import annotations

import json
import time

import numpy as np

from kbls.links.forms import name_key
from kbls.notepath import file_stem
from kbls.storage import fts
from kbls.storage.connection import Connection, ConnectionPool
from kbls.storage.records import NoteRecord, NoteSpans, Span
from kbls.storage.schema import CHUNKING_KEY

BATCH = 500


class StoreWrites:
    """Write transactions over `self.db`."""

    db: ConnectionPool
    #: a large run writes notes before their vectors and embeds after (`kbls.indexing.pipeline`)
    lexical_first = True

    def write_note(
        self, note: NoteRecord, vectors: dict[str, np.ndarray], texts: dict[str, str] | None = None
    ) -> tuple[int, int, int]:
        """Replace one file's rows in one transaction. `vectors` maps chunk hash -> vector for
        chunk texts with no vector stored (a pending one is filled); a text in neither the store
        nor `vectors` is marked pending with its model text from `texts`. Returns (chunks
        written, vectors added, chunks left waiting for a vector)."""
        added = waiting = 0
        with self.db.atomic() as c:
            row = c.execute("SELECT id FROM files WHERE path = ?", (note.path,)).fetchone()
            values = dict(
                path=note.path, hash=note.hash, size=note.size, mtime_ns=note.mtime_ns, title=note.title,
                stem=file_stem(note.path), kind=note.kind, note_type=note.note_type, aliases=json.dumps(note.aliases),
                error=note.warning, indexed_at=time.time(),
            )
            if row is None:
                inserted = c.execute(
                    "INSERT INTO files(path, hash, size, mtime_ns, title, stem, kind, note_type, aliases, error, indexed_at) "
                    "VALUES (:path, :hash, :size, :mtime_ns, :title, :stem, :kind, :note_type, :aliases, :error, :indexed_at)",
                    values,
                ).lastrowid
                assert inserted is not None  # an INSERT always sets it
                file_id = int(inserted)
            else:
                file_id = int(row[0])
                c.execute(
                    "UPDATE files SET hash=:hash, size=:size, mtime_ns=:mtime_ns, title=:title, stem=:stem, kind=:kind, "
                    "note_type=:note_type, aliases=:aliases, error=:error, indexed_at=:indexed_at WHERE id=:id",
                    {**values, "id": file_id},
                )
            _delete_chunks(c, file_id)
            c.execute("DELETE FROM tags WHERE file_id = ?", (file_id,))
            c.execute("DELETE FROM links WHERE file_id = ?", (file_id,))
            _write_spans(c, file_id, note.spans)
            c.executemany("INSERT OR IGNORE INTO tags(file_id, tag) VALUES (?, ?)", [(file_id, t) for t in note.tags])
            c.executemany(  # a wiki target as its `name_key`, which `StoreReads.incoming_links` looks up
                "INSERT INTO links(file_id, kind, target) VALUES (?, ?, ?)",
                [(file_id, k, name_key(t) if k == "wiki" else t) for k, t in note.links],
            )
            for chunk in note.chunks:
                found = c.execute("SELECT id FROM embeddings WHERE hash = ?", (chunk.hash,)).fetchone()
                vector = vectors.get(chunk.hash)
                if found is None:
                    embedding_id = _insert_embedding(c, chunk.hash)
                    if vector is None:
                        if texts is None or chunk.hash not in texts:
                            raise KeyError(f"no vector and no text for chunk {chunk.hash} of {note.path}")
                        c.execute(PENDING_INSERT, (embedding_id, texts[chunk.hash]))
                        waiting += 1
                    else:
                        _insert_vector(c, embedding_id, vector)
                        added += 1
                else:
                    embedding_id = found[0]
                    filled = None if vector is None else _fill(c, embedding_id, chunk.hash, vector)
                    if filled is not None:
                        embedding_id, added = filled, added + 1
                    elif vector is None and c.execute(PENDING_SQL, (embedding_id,)).fetchone():
                        waiting += 1
                chunk_rowid = c.execute(
                    "INSERT INTO chunks(chunk_id, file_id, ord, hash, embedding_id, start_line, end_line, breadcrumb, body) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (chunk.chunk_id, file_id, chunk.ord, chunk.hash, embedding_id, chunk.start_line,
                     chunk.end_line, chunk.breadcrumb, chunk.body),
                ).lastrowid
                assert chunk_rowid is not None  # an INSERT always sets it
                fts.insert_chunk(c, chunk_rowid, note.title, chunk.breadcrumb, chunk.body)
        return len(note.chunks), added, waiting

    def fill_vectors(self, vectors: dict[str, np.ndarray]) -> int:
        """Give pending chunk texts (by hash) their vectors, in one transaction; returns how many
        were filled (a text no longer pending, e.g. filled by a save meanwhile, is left alone)."""
        filled = 0
        with self.db.atomic() as c:
            for digest, vector in vectors.items():
                found = c.execute("SELECT id FROM embeddings WHERE hash = ?", (digest,)).fetchone()
                if found is not None and _fill(c, found[0], digest, vector) is not None:
                    filled += 1
        return filled

    def record_problem(self, path: str, reason: str, size: int, mtime_ns: int) -> None:
        """Note why a file was skipped; its old chunks (if any) stay searchable."""
        with self.db.atomic() as c:
            updated = c.execute(
                "UPDATE files SET error = ?, size = ?, mtime_ns = ? WHERE path = ?", (reason, size, mtime_ns, path)
            ).rowcount
            if not updated:
                c.execute(
                    "INSERT INTO files(path, hash, size, mtime_ns, error, indexed_at) VALUES (?, NULL, ?, ?, ?, ?)",
                    (path, size, mtime_ns, reason, time.time()),
                )

    def record_chunking(self, fingerprint: str) -> None:
        """Record that every note is now chunked under `fingerprint`: only after a complete full
        scan, so an interrupted one is redone by the next."""
        with self.db.atomic() as c:
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (CHUNKING_KEY, fingerprint))

    def touch(self, path: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime of a file whose content did not change."""
        with self.db.atomic() as c:
            c.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path))

    def delete_file(self, path: str) -> bool:
        """Drop a file and its chunks; False when it was not stored."""
        with self.db.atomic() as c:
            row = c.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
            if row is None:
                return False
            _delete_chunks(c, row[0])
            c.execute("DELETE FROM files WHERE id = ?", (row[0],))
            return True

    def collect_garbage(self) -> int:
        """Drop vectors no chunk uses any more (kept until a full scan so renames re-embed nothing)."""
        with self.db.atomic() as c:
            ids = [r[0] for r in c.execute("SELECT id FROM embeddings WHERE id NOT IN (SELECT embedding_id FROM chunks)")]
            for i in range(0, len(ids), BATCH):
                batch = ids[i : i + BATCH]
                marks = ",".join("?" * len(batch))
                c.execute(f"DELETE FROM vec_embeddings WHERE rowid IN ({marks})", batch)
                c.execute(f"DELETE FROM pending_embeddings WHERE embedding_id IN ({marks})", batch)
                c.execute(f"DELETE FROM embeddings WHERE id IN ({marks})", batch)
        return len(ids)


PENDING_SQL = "SELECT 1 FROM pending_embeddings WHERE embedding_id = ?"
PENDING_INSERT = "INSERT INTO pending_embeddings(embedding_id, text) VALUES (?, ?)"


def _insert_embedding(c: Connection, digest: str) -> int:
    inserted = c.execute("INSERT INTO embeddings(hash) VALUES (?)", (digest,)).lastrowid
    assert inserted is not None  # an INSERT always sets it
    return int(inserted)


def _insert_vector(c: Connection, embedding_id: int, vector: np.ndarray) -> None:
    c.execute(
        "INSERT INTO vec_embeddings(rowid, embedding) VALUES (?, ?)",
        (embedding_id, np.asarray(vector, dtype=np.float32).tobytes()),
    )


def _fill(c: Connection, embedding_id: int, digest: str, vector: np.ndarray) -> int | None:
    """Swap a pending mark for `vector` under a new embedding id (its chunks follow); None when
    `embedding_id` is not pending."""
    if c.execute("DELETE FROM pending_embeddings WHERE embedding_id = ?", (embedding_id,)).rowcount == 0:
        return None
    # The hash is unique and chunks may not point at a missing row: a stand-in hash until the old
    # row is gone.
    new_id = _insert_embedding(c, f"{digest}\0filling")
    _insert_vector(c, new_id, vector)
    c.execute("UPDATE chunks SET embedding_id = ? WHERE embedding_id = ?", (new_id, embedding_id))
    c.execute("DELETE FROM embeddings WHERE id = ?", (embedding_id,))
    c.execute("UPDATE embeddings SET hash = ? WHERE id = ?", (digest, new_id))
    return new_id


def _delete_chunks(c: Connection, file_id: int) -> None:
    c.execute(fts.DELETE_FILE_SQL, (file_id,))
    c.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))


def _write_spans(c: Connection, file_id: int, spans: NoteSpans) -> None:
    """Replace the note's link and tag positions (in the transaction of its chunks)."""
    c.execute("DELETE FROM link_spans WHERE file_id = ?", (file_id,))
    c.execute("DELETE FROM tag_spans WHERE file_id = ?", (file_id,))
    c.executemany(
        "INSERT INTO link_spans(file_id, kind, target, target_key, heading, label, line, start, end, start16, end16, "
        "start8, end8) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (file_id, s.kind, s.target, s.key, s.heading, s.label, *_columns(s.span))
            for s in spans.links
        ],
    )
    c.executemany(
        "INSERT INTO tag_spans(file_id, tag, written, front_matter, line, start, end, start16, end16, start8, end8) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (file_id, t.tag, t.written, int(t.front_matter), *_columns(t.span))
            for t in spans.tags
        ],
    )


def _columns(span: Span) -> tuple[int, ...]:
    return span.line, span.start, span.end, span.start16, span.end16, span.start8, span.end8
