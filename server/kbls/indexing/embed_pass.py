"""The embedding pass: vectors for the chunk texts the lexical pass wrote without them.

Every note is searchable by its words as soon as the lexical pass wrote it; this pass takes the
pending texts a step at a time in the order the store hands them out (the notes named first, e.g.
those open in an editor, then the most recently modified: `kbls.storage.pending`), sorts each
step by length and embeds and writes it one model batch (`batch_size` texts) at a time, one
transaction a batch. `cancel` (a save waiting) and the time budget are looked at after every
batch, so a save waits for one model batch, never for a whole step; a kill loses at most that
batch, and the next run goes on with what is still pending.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from kbls.indexing.embed import Embedder
from kbls.indexing.giveway import READS
from kbls.indexing.progress import Tracker
from kbls.storage.roles import NoteWriter

#: model batches per step in the daemon: enough texts to sort by length, few enough that progress
#: moves (a save does not wait for a step: the pass stops after the model batch under way)
STEP_BATCHES = 4
#: model batches per step when nothing waits on the pass (`kbls index`): texts are sorted by
#: length within a step, so a larger step pads less
LONG_STEP_BATCHES = 32


def embed_pending(
    store: NoteWriter,
    embedder: Embedder,
    batch_size: int,
    tracker: Tracker,
    *,
    first: Callable[[], Sequence[str]] | None = None,
    cancel: threading.Event | None = None,
    budget_s: float | None = None,
    step_batches: int = STEP_BATCHES,
) -> int:
    """Embed pending chunk texts until none is left, `cancel` is set or `budget_s` seconds have
    passed (both checked after every model batch); returns the texts embedded."""
    started = time.monotonic()
    done = 0
    tracker.start_embedding(store.pending_count())

    def stop() -> bool:
        cancelled = cancel is not None and cancel.is_set()
        return cancelled or (budget_s is not None and time.monotonic() - started >= budget_s)

    while cancel is None or not cancel.is_set():
        texts = store.pending_texts(batch_size * step_batches, first() if first is not None else ())
        if not texts:
            break
        embedded, stopped = embed_texts(store, embedder, texts, batch_size, tracker, stop)
        done += embedded
        if stopped:
            return done
    return done


def embed_texts(
    store: NoteWriter, embedder: Embedder, texts: dict[str, str], batch_size: int, tracker: Tracker,
    stop: Callable[[], bool],
) -> tuple[int, bool]:
    """Embed `texts` (hash -> model text) and write their vectors; returns how many, and whether
    `stop` ended it early. Sorted by length, embedded and written a model batch at a time: little
    padding, and what is embedded is stored before `stop` is asked (the fill is per text hash, so
    a run cut short leaves nothing half written)."""
    done = 0
    hashes = sorted(texts, key=lambda h: len(texts[h]))
    for start in range(0, len(hashes), batch_size):
        part = hashes[start : start + batch_size]
        READS.give_way()
        vectors = embedder.embed_passages([texts[h] for h in part])
        store.fill_vectors(dict(zip(part, vectors, strict=True)))
        done += len(part)
        tracker.embedded(len(part))
        if stop():
            return done, True
    return done, False
