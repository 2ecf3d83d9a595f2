"""The embedding pass: vectors for the chunk texts the lexical pass wrote without them.

Every note is searchable by its words as soon as the lexical pass wrote it; this pass takes the
pending texts a step at a time in the order the store hands them out (the notes named first, e.g.
those open in an editor, then the most recently modified: `kbls.storage.pending`), embeds each
step in length-sorted model batches and writes its vectors in one transaction. A kill loses at
most the step being embedded; the next run goes on with what is still pending.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from kbls.indexing.embed import Embedder
from kbls.indexing.progress import Tracker
from kbls.storage.roles import NoteWriter

#: model batches per step: enough texts to sort by length, few enough that progress moves and a
#: save waits at most one step
STEP_BATCHES = 4


def embed_pending(
    store: NoteWriter,
    embedder: Embedder,
    batch_size: int,
    tracker: Tracker,
    *,
    first: Callable[[], Sequence[str]] | None = None,
    cancel: threading.Event | None = None,
    budget_s: float | None = None,
) -> int:
    """Embed pending chunk texts until none is left, `cancel` is set or `budget_s` seconds have
    passed (checked between steps); returns the texts embedded."""
    started = time.monotonic()
    done = 0
    tracker.start_embedding(store.pending_count())
    while cancel is None or not cancel.is_set():
        texts = store.pending_texts(batch_size * STEP_BATCHES, first() if first is not None else ())
        if not texts:
            break
        hashes = list(texts)
        vectors = embedder.embed_passages([texts[h] for h in hashes])
        store.fill_vectors(dict(zip(hashes, vectors, strict=True)))
        done += len(hashes)
        tracker.embedded(len(hashes))
        if budget_s is not None and time.monotonic() - started >= budget_s:
            break
    return done
