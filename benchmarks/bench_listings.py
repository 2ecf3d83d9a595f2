"""What `kb/tags` and `kb/notes` cost in the store: the reads of `kbls.retrieval.listing` on a
10,000-note store (3 chunks and 5 of 300 tags per note, rows written straight into SQLite: the
reads never touch vectors, so no model is needed). Prints p50 and max of 50 runs each.

    .venv/bin/python benchmarks/bench_listings.py [--notes 10000]
"""

from __future__ import annotations

import argparse
import random
import tempfile
from collections.abc import Callable
from pathlib import Path

from kbls.query.filters import Filters
from kbls.retrieval.listing import Listing
from kbls.storage.store import Store
from timing import timed

TAGS = [f"tag{i}" for i in range(300)]


def build(folder: Path, notes: int) -> Store:
    store = Store(folder / "store", model_id="bench", dimension=4, model_sha256=None, root=folder)
    rng = random.Random(1)
    with store.db.atomic() as c:
        for i in range(notes):
            fid = c.execute(
                "INSERT INTO files(path, hash, size, mtime_ns, title, stem) VALUES (?, 'h', 1, ?, ?, ?)",
                (f"d{i % 50}/note-{i}.md", rng.randrange(10**18), f"Note {i}", f"note-{i}"),
            ).lastrowid
            eid = c.execute("INSERT INTO embeddings(hash) VALUES (?)", (f"e{i}",)).lastrowid
            for order in range(3):
                c.execute(
                    "INSERT INTO chunks(chunk_id, file_id, ord, hash, embedding_id, start_line, end_line, breadcrumb, body) "
                    "VALUES (?, ?, ?, 'x', ?, ?, ?, '', ?)",
                    (f"c{i}-{order}", fid, order, eid, order * 5, order * 5 + 4, f"# Note {i}\n\nProse of section {order}. " * 3),
                )
            c.executemany("INSERT INTO tags(file_id, tag) VALUES (?, ?)", [(fid, t) for t in rng.sample(TAGS, 5)])
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = build(Path(tmp), args.notes)
        listing = Listing(store)
        cases: dict[str, Callable[[], object]] = {
            "kb/tags, every tag": lambda: listing.tags(),
            "kb/tags, prefix 'tag1'": lambda: listing.tags("tag1"),
            "kb/tags, one nested root left out": lambda: listing.tags("", ["d3/"]),
            "kb/notes, 200 by mtime (no snippets)": lambda: listing.recent(Filters(), 200),
            "kb/notes, 200 with tags and snippets": lambda: listing.summaries(listing.recent(Filters(), 200)[0]),
            "kb/notes, 50 of tag:tag7": lambda: listing.summaries(listing.recent(Filters(tags=("tag7",)), 50)[0]),
        }
        print(f"{args.notes} notes, {len(TAGS)} tags")
        for name, fn in cases.items():
            p50, worst = timed(fn)
            print(f"  {name:40} p50 {p50:6.2f} ms  max {worst:6.2f} ms")
        store.close()


if __name__ == "__main__":
    main()
