"""The store's writes: one transaction per file update, so a crash leaves the old rows or the
new ones, never half. Vectors are content-addressed by chunk-text hash (`embeddings`), so a
moved, renamed or copied note re-embeds nothing.

`StoreWrites` is one half of `kbls.storage.store.Store` (the other is `StoreReads`).
"""

from __future__ import annotations

import json
import time

import numpy as np

from kbls.indexing.linkforms import name_key
from kbls.notepath import file_stem
from kbls.storage import fts
from kbls.storage.connection import Connection, ConnectionPool
from kbls.storage.records import NoteRecord, NoteSpans, Span
from kbls.storage.schema import CHUNKING_KEY

BATCH = 500


class StoreWrites:
    """Write transactions over `self.db`."""

    db: ConnectionPool

    def write_note(self, note: NoteRecord, vectors: dict[str, np.ndarray]) -> tuple[int, int]:
        """Replace one file's rows in one transaction. `vectors` maps chunk hash -> vector for
        chunks whose text is not stored yet. Returns (chunks written, vectors added)."""
        added = 0
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
                if found is None:
                    vector = vectors[chunk.hash]
                    embedding_id = c.execute("INSERT INTO embeddings(hash) VALUES (?)", (chunk.hash,)).lastrowid
                    c.execute(
                        "INSERT INTO vec_embeddings(rowid, embedding) VALUES (?, ?)",
                        (embedding_id, np.asarray(vector, dtype=np.float32).tobytes()),
                    )
                    added += 1
                else:
                    embedding_id = found[0]
                chunk_rowid = c.execute(
                    "INSERT INTO chunks(chunk_id, file_id, ord, hash, embedding_id, start_line, end_line, breadcrumb, body) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (chunk.chunk_id, file_id, chunk.ord, chunk.hash, embedding_id, chunk.start_line,
                     chunk.end_line, chunk.breadcrumb, chunk.body),
                ).lastrowid
                assert chunk_rowid is not None  # an INSERT always sets it
                fts.insert_chunk(c, chunk_rowid, note.title, chunk.breadcrumb, chunk.body)
        return len(note.chunks), added

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
                c.execute(f"DELETE FROM embeddings WHERE id IN ({marks})", batch)
        return len(ids)


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
