"""The team store's writes: one transaction per note, so every chunk has its vector and its
terms, and a reader sees a note before or after the transaction, never half of it.

Every write bumps its root's `revision`, which readers watch (`lexical.PgLexical`) to forget
remembered statistics; it also makes concurrent writers of one root queue on that row (the
ingest worker's advisory lock already keeps them to one).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

import numpy as np
import psycopg

from kbls.errors import StoreError
from kbls.links.forms import name_key
from kbls.notepath import file_stem
from kbls.storage.postgres.connection import PgPool, Row
from kbls.storage.postgres.terms import chunk_terms
from kbls.storage.records import NoteRecord, NoteSpans, Span

_BUMP = "UPDATE roots SET revision = revision + 1 WHERE id = %s"


def _columns(span: Span) -> tuple[int, ...]:
    return span.line, span.start, span.end, span.start16, span.end16, span.start8, span.end8


class PgWrites:
    """Write transactions of one root over `self.db`."""

    db: PgPool
    root_id: int

    #: the team store writes each note with its vectors (no pending marks): the pipeline embeds
    #: before it writes, as for a save
    lexical_first = False

    def write_note(
        self, note: NoteRecord, vectors: dict[str, np.ndarray], texts: dict[str, str] | None = None
    ) -> tuple[int, int, int]:
        """Replace one file's rows in one transaction; `vectors` holds the vectors of chunk
        texts not stored yet (`texts` is not used: nothing waits). Returns (chunks written,
        vectors added, 0 left waiting)."""
        with self.db.atomic() as c:
            row = c.execute(
                "INSERT INTO files(root_id, path, hash, size, mtime_ns, title, stem, kind, note_type, aliases, error, "
                "indexed_at) VALUES (%(root)s, %(path)s, %(hash)s, %(size)s, %(mtime)s, %(title)s, %(stem)s, %(kind)s, "
                "%(type)s, %(aliases)s, %(error)s, %(at)s) ON CONFLICT (root_id, path) DO UPDATE SET hash = EXCLUDED.hash, "
                "size = EXCLUDED.size, mtime_ns = EXCLUDED.mtime_ns, title = EXCLUDED.title, stem = EXCLUDED.stem, "
                "kind = EXCLUDED.kind, note_type = EXCLUDED.note_type, aliases = EXCLUDED.aliases, error = EXCLUDED.error, "
                "indexed_at = EXCLUDED.indexed_at RETURNING id",
                {
                    "root": self.root_id, "path": note.path, "hash": note.hash, "size": note.size, "mtime": note.mtime_ns,
                    "title": note.title, "stem": file_stem(note.path), "kind": note.kind, "type": note.note_type,
                    "aliases": json.dumps(note.aliases), "error": note.warning, "at": time.time(),
                },
            ).fetchone()
            assert row is not None  # INSERT … RETURNING always returns the row
            file_id = int(row[0])
            counted = [chunk_terms(note.title, chunk.breadcrumb, chunk.body) for chunk in note.chunks]
            # The rest without waiting for each answer (a pipeline: one round trip, not ~15).
            with c.pipeline(), c.cursor() as cur:
                for table in ("chunks", "tags", "links", "link_spans", "tag_spans"):
                    c.execute(f"DELETE FROM {table} WHERE file_id = %s", (file_id,))
                self._write_spans(c, file_id, note.spans)
                cur.executemany(
                    "INSERT INTO tags(file_id, tag) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                    [(file_id, t) for t in dict.fromkeys(note.tags)],
                )
                cur.executemany(
                    "INSERT INTO links(file_id, kind, target) VALUES (%s, %s, %s)",
                    [(file_id, k, name_key(t) if k == "wiki" else t) for k, t in note.links],
                )
                wanted = {chunk.hash for chunk in note.chunks if chunk.hash in vectors}
                with c.cursor() as embeddings:
                    embeddings.executemany(
                        "INSERT INTO embeddings(hash, embedding) VALUES (%s, %s) ON CONFLICT (hash) DO NOTHING",
                        [(h, np.asarray(vectors[h], dtype=np.float32)) for h in sorted(wanted)],
                    )
                c.execute(
                    "INSERT INTO chunks(chunk_id, root_id, file_id, ord, hash, embedding_id, start_line, end_line, "
                    "breadcrumb, body, ntok) SELECT u.chunk_id, %s, %s, u.ord, u.hash, e.id, u.start_line, "
                    "u.end_line, u.breadcrumb, u.body, u.ntok FROM unnest(%s::text[], %s::int[], %s::text[], "
                    "%s::int[], %s::int[], %s::text[], %s::text[], %s::int[]) AS u(chunk_id, ord, hash, start_line, "
                    "end_line, breadcrumb, body, ntok) JOIN embeddings e ON e.hash = u.hash ORDER BY u.ord",
                    (
                        self.root_id, file_id, [ch.chunk_id for ch in note.chunks], [ch.ord for ch in note.chunks],
                        [ch.hash for ch in note.chunks], [ch.start_line for ch in note.chunks],
                        [ch.end_line for ch in note.chunks], [ch.breadcrumb for ch in note.chunks],
                        [ch.body for ch in note.chunks], [total for _, total in counted],
                    ),
                )
                terms = [
                    (ch.ord, term, tf) for ch, (found, _) in zip(note.chunks, counted, strict=True) for term, tf in found.items()
                ]
                c.execute(
                    "INSERT INTO chunk_terms(chunk_id, root_id, term, tf, ntok) SELECT c.id, %s, u.term, u.tf, c.ntok "
                    "FROM unnest(%s::int[], %s::text[], %s::real[]) AS u(ord, term, tf) "
                    "JOIN chunks c ON c.file_id = %s AND c.ord = u.ord",
                    (self.root_id, [t[0] for t in terms], [t[1] for t in terms], [t[2] for t in terms], file_id),
                )
                stored = c.execute("SELECT count(*) FROM chunks WHERE file_id = %s", (file_id,))
                c.execute(_BUMP, (self.root_id,))
            row = stored.fetchone()
            if row is None or int(row[0]) != len(note.chunks):  # a chunk without its vector: roll back
                raise StoreError(
                    f"cannot write {note.path} to the store {self.db.display}: a chunk's vector is missing"
                )
            added = max(embeddings.rowcount, 0)
        return len(note.chunks), added, 0

    def fill_vectors(self, vectors: dict[str, np.ndarray]) -> int:
        """Nothing waits for a vector in the team store."""
        return 0

    def pending_texts(self, limit: int, first: Sequence[str] = ()) -> dict[str, str]:
        return {}

    def pending_count(self) -> int:
        return 0

    @staticmethod
    def _write_spans(c: psycopg.Connection[Row], file_id: int, spans: NoteSpans) -> None:
        with c.cursor() as cur:
            cur.executemany(
                "INSERT INTO link_spans(file_id, kind, target, target_key, heading, label, line, start_cp, end_cp, "
                "start16, end16, start8, end8) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [(file_id, s.kind, s.target, s.key, s.heading, s.label, *_columns(s.span)) for s in spans.links],
            )
            cur.executemany(
                "INSERT INTO tag_spans(file_id, tag, written, front_matter, line, start_cp, end_cp, start16, end16, "
                "start8, end8) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [(file_id, t.tag, t.written, t.front_matter, *_columns(t.span)) for t in spans.tags],
            )

    def record_problem(self, path: str, reason: str, size: int, mtime_ns: int) -> None:
        """Note why a file was skipped; its old chunks (if any) stay searchable."""
        with self.db.atomic() as c:
            c.execute(
                "INSERT INTO files(root_id, path, hash, size, mtime_ns, error, indexed_at) VALUES (%s, %s, NULL, %s, %s, %s, %s) "
                "ON CONFLICT (root_id, path) DO UPDATE SET error = EXCLUDED.error, size = EXCLUDED.size, "
                "mtime_ns = EXCLUDED.mtime_ns",
                (self.root_id, path, size, mtime_ns, reason, time.time()),
            )
            c.execute(_BUMP, (self.root_id,))

    def record_chunking(self, fingerprint: str) -> None:
        with self.db.atomic() as c:
            c.execute("UPDATE roots SET chunking = %s WHERE id = %s", (fingerprint, self.root_id))

    def touch(self, path: str, size: int, mtime_ns: int) -> None:
        with self.db.atomic() as c:
            c.execute(
                "UPDATE files SET size = %s, mtime_ns = %s WHERE root_id = %s AND path = %s",
                (size, mtime_ns, self.root_id, path),
            )

    def delete_file(self, path: str) -> bool:
        with self.db.atomic() as c:
            cur = c.execute("DELETE FROM files WHERE root_id = %s AND path = %s", (self.root_id, path))
            if cur.rowcount:
                c.execute(_BUMP, (self.root_id,))
            return bool(cur.rowcount)

    def collect_garbage(self) -> int:
        """Drop vectors no chunk of any root uses (vectors are shared by every root)."""
        with self.db.atomic() as c:
            cur = c.execute(
                "DELETE FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.embedding_id = e.id)"
            )
            return max(cur.rowcount, 0)
