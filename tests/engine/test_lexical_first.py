"""Lexical first: a first index writes every note without vectors, then embeds them.

Between the two passes every note is found by its words and its name (hybrid search falls back
on the lexical side for notes without a vector, link completion and resolution, tags, backlinks);
the embedding pass takes the open notes first, then the newest; a saved note jumps the queue.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from tests.support.corpus import FIXTURES, write
from tests.support.store_check import check_store

from kbls.daemon.jobs import Job, JobQueue, OpenRequest, Outcome, Run
from kbls.engine import Engine
from kbls.indexing.embed_pass import STEP_BATCHES
from kbls.indexing.pipeline import INLINE_FILES
from kbls.indexing.progress import IndexProgress
from kbls.limits import Mode
from kbls.links.suggest import LinkQuery
from kbls.links.syntax import LinkKind, LinkRef
from kbls.query.filters import Filters


def _fixtures(root: Path) -> None:
    shutil.copytree(FIXTURES, root, dirs_exist_ok=True)


def _paths_of(engine: Engine, hashes: list[str]) -> list[set[str]]:
    rows = engine.store.conn.execute(
        "SELECT c.hash, f.path FROM chunks c JOIN files f ON f.id = c.file_id"
    ).fetchall()
    by_hash: dict[str, set[str]] = {}
    for digest, path in rows:
        by_hash.setdefault(digest, set()).add(path)
    return [by_hash[h] for h in hashes]


def test_every_note_is_found_by_words_and_names_before_any_vector(root: Path, make_engine: Callable[..., Engine]) -> None:
    _fixtures(root)
    engine = make_engine(root)
    report = engine.index(embed=False)
    counts = engine.store.counts()
    assert report.embedded == 0 and counts.vectors == 0
    assert report.pending == counts.waiting == counts.chunks > 0
    check_store(engine.store_dir, root)  # one text row each, a pending mark instead of a vector
    # every note by a word of its own, in hybrid mode too (the lexical side answers)
    words = [("sourdough", "cooking/sourdough.md"), ("Ownership", "rust/ownership.md"), ("packing", "travel/packing.txt")]
    for word, path in words:
        hits = engine.search(word, mode=Mode.HYBRID).hits
        assert hits and hits[0].path == path, (word, [h.path for h in hits])
    # names: a link resolves by title or alias, completion offers the note by its title, tags list
    resolved = engine.links.resolve("rust/ownership.md", [LinkRef(LinkKind.WIKI, "Borrowing", None, 0, 0, 1)], [])
    assert [[t.path for t in found] for found in resolved] == [["rust/borrowing.md"]]
    query = LinkQuery(kind=LinkKind.WIKI, typed="Owner", context="", document=[])
    assert "rust/ownership.md" in [s.path for s in engine.links.suggest("rust/borrowing.md", query)]
    assert "rust" in [t.name for t in engine.listing.tags()]
    # the embedding pass fills every vector, and hybrid answers carry a cosine again
    done = engine.embed_pending()
    assert done.embedded == counts.vectors + len(check_store(engine.store_dir).embedded) and done.pending == 0
    state = check_store(engine.store_dir, root, full_scan_done=True)
    assert not state.pending and engine.store.counts().vectors == len(state.embedded)
    explained = engine.search("who owns the value after a move", mode=Mode.HYBRID, explain=True).hits
    assert explained[0].path == "rust/ownership.md"
    assert explained[0].explain is not None and explained[0].explain.cosine is not None


def test_kbls_index_writes_lexically_first_and_leaves_nothing_pending(root: Path, make_engine: Callable[..., Engine]) -> None:
    _fixtures(root)
    engine = make_engine(root)
    seen: list[tuple[bool, int]] = []
    report = engine.index(progress=lambda p: seen.append((p.embedding, p.files_done)))
    assert report.pending == 0 and report.embedded == engine.store.counts().vectors > 0
    files = engine.store.counts().files
    first_embedding = next(i for i, (embedding, _) in enumerate(seen) if embedding)
    assert seen[first_embedding - 1][1] == files, "every note was written before the first vector"


def test_open_notes_embed_first_then_the_newest(root: Path, make_engine: Callable[..., Engine]) -> None:
    for i in range(6):
        path = write(root, f"n{i}.md", f"# Note {i}\n\nParagraph about topic number {i} and nothing else.\n")
        os.utime(path, ns=(1_000_000_000 * (i + 1), 1_000_000_000 * (i + 1)))
    engine = make_engine(root)
    engine.index(embed=False)
    order = engine.store.pending_texts(100, first=["n1.md"])
    assert _paths_of(engine, list(order)) == [{"n1.md"}, {"n5.md"}, {"n4.md"}, {"n3.md"}, {"n2.md"}, {"n0.md"}]
    assert list(engine.store.pending_texts(2)) == list(engine.store.pending_texts(100))[:2]
    engine.embed_pending(first=lambda: ["n1.md"], budget_s=0.0)  # one step: the open note among it
    left = set(engine.store.pending_texts(100))
    assert not left & {h for h, paths in zip(order, _paths_of(engine, list(order)), strict=True) if paths == {"n1.md"}}


def test_a_saved_note_jumps_the_queue(root: Path, make_engine: Callable[..., Engine]) -> None:
    for i in range(INLINE_FILES + 4):
        write(root, f"n{i}.md", f"# Note {i}\n\nParagraph about topic number {i} and nothing else.\n")
    engine = make_engine(root)
    engine.index(embed=False)
    waiting = engine.store.counts().waiting
    saved = write(root, "n3.md", "# Note 3\n\nParagraph about topic number 3 and nothing else.\n\nA new line.\n")
    report = engine.index([saved])
    assert report.embedded >= 1 and report.pending == waiting - 1  # its old chunk replaced, new one embedded
    ids = engine.store.conn.execute(
        "SELECT c.embedding_id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'n3.md'"
    ).fetchall()
    assert engine.vectors.similarities(engine.embedder.embed_query("new line"), [i for (i,) in ids])
    # an unchanged note whose text is pending is embedded when saved again (force)
    other = root / "n7.md"
    hashes = {
        h for (h,) in engine.store.conn.execute(
            "SELECT c.hash FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'n7.md'"
        )
    }
    assert hashes and hashes <= set(engine.store.pending_texts(100))  # waiting before the save
    engine.index([other], force=True)
    assert hashes <= engine.store.known_embeddings(hashes)  # a vector each now
    assert not hashes & set(engine.store.pending_texts(100))
    check_store(engine.store_dir, root)
    assert engine.search("topic number 7", filters=Filters(), mode=Mode.SEMANTIC).hits[0].path == "n7.md"


def test_a_save_during_the_embedding_pass_stops_it_after_one_model_batch(root: Path, make_engine: Callable[..., Engine]) -> None:
    """A save queued while the background pass embeds (as the daemon does: the queue says the
    running embedding step is preempted, the worker sets its cancel event) is indexed and
    semantically searchable after at most one more model batch, not a whole step."""
    for i in range(140):
        write(root, f"n{i}.md", f"# Note {i}\n\nParagraph {i} about topic number {i} and nothing else.\n")
    engine = make_engine(root)
    engine.index(embed=False)
    batch = engine.config.model.batch_size
    assert engine.store.counts().waiting > batch * STEP_BATCHES  # more than one step pending
    key = str(root)
    queue = JobQueue()
    queue.request_open(OpenRequest(root.as_uri(), root))
    queue.next(0.0)
    queue.opened(key, Job(embed=True))
    step = queue.next(0.0)
    assert isinstance(step, Run) and step.job.embed_only
    cancel = threading.Event()
    saved = write(root, "saved.md", "# Sourdough\n\nFeed the starter with rye flour the night before baking.\n")

    def on_progress(p: IndexProgress) -> None:
        if p.chunks_embedded and not cancel.is_set() and queue.add(key, Job(files={"saved.md"})):
            cancel.set()  # the save arrives once the first model batch is stored

    report = engine.embed_pending(progress=on_progress, cancel=cancel, budget_s=600.0)
    assert cancel.is_set() and report.embedded <= batch, (report.embedded, batch)
    queue.finish(Outcome.DONE, 0.0)
    step = queue.next(0.0)
    assert isinstance(step, Run) and step.job.files == {"saved.md"}
    engine.index([saved])
    hits = engine.search("feeding a sourdough starter", filters=Filters(), mode=Mode.SEMANTIC).hits
    assert hits and hits[0].path == "saved.md"
    assert engine.store.counts().waiting >= 140 - batch  # the pass had far more to do


def test_an_off_topic_hybrid_query_answers_nothing_while_pending(root: Path, make_engine: Callable[..., Engine]) -> None:
    """Chunks still waiting for their vectors meet the same relevance floor as embedded ones: a
    query sharing one common word with a note is no answer, pending or embedded."""
    _fixtures(root)
    engine = make_engine(root)
    engine.index(embed=False)
    assert engine.store.counts().vectors == 0
    off_topic = "quantum zebra value"
    assert not engine.search(off_topic, filters=Filters(), mode=Mode.HYBRID).hits
    hits = engine.search("sourdough", filters=Filters(), mode=Mode.HYBRID).hits
    assert hits and hits[0].path == "cooking/sourdough.md"  # a word of its own still finds it
    engine.embed_pending()
    assert not engine.search(off_topic, filters=Filters(), mode=Mode.HYBRID).hits


def test_a_save_is_found_by_its_words_before_its_model_call(root: Path, make_engine: Callable[..., Engine]) -> None:
    """A save writes the note first and embeds its new text after: the model call, the largest
    part of a save, does not stand before the note is searchable by its words."""
    write(root, "a.md", "# Alpha\n\nA first paragraph about nothing in particular.\n")
    engine = make_engine(root)
    engine.index()
    saved = write(root, "a.md", "# Alpha\n\nA first paragraph about nothing in particular.\n\nZorbly marmoset.\n")
    seen: list[list[str]] = []
    original = engine.embedder.embed_passages

    def embed_and_look(texts: Sequence[str]) -> np.ndarray:
        # from another thread, as the daemon's queries run while its index thread embeds
        looker = threading.Thread(
            target=lambda: seen.append([h.path for h in engine.search("zorbly marmoset", mode=Mode.LEXICAL).hits])
        )
        looker.start()
        looker.join()
        return original(texts)

    engine.embedder.embed_passages = embed_and_look  # type: ignore[method-assign]
    try:
        report = engine.index([saved])
    finally:
        del engine.embedder.embed_passages
    assert seen and seen[0] == ["a.md"]
    assert report.embedded >= 1 and report.pending == 0
    assert engine.search("zorbly marmoset", mode=Mode.SEMANTIC).hits[0].path == "a.md"
    check_store(engine.store_dir, root)
