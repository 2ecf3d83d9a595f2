"""The root registry over real engines: which root holds a path, store checks, and the state word."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kbls.config import CONFIG_FILE
from kbls.daemon.roots import STORE_CHECK_INTERVAL, RefusedRoot, Root, RootRegistry
from kbls.daemon.status import state_of
from kbls.engine import Engine
from kbls.errors import BeingReopenedError, OutsideRootError, StoreClosedError
from kbls.indexing.embed import Embedder


@pytest.fixture
def registry(tmp_path: Path, embedder: Embedder) -> Iterator[tuple[RootRegistry, Path, Path]]:
    """Two open roots, one nested in the other, each with its own store."""
    outer, inner = tmp_path / "kb", tmp_path / "kb" / "rust"
    inner.mkdir(parents=True)
    (inner / "borrowing.md").write_text("# Borrowing\n", encoding="utf-8")
    (outer / "top.md").write_text("# Top\n", encoding="utf-8")
    registry = RootRegistry()
    engines = []
    for folder in (outer, inner):
        engine = Engine(folder, store_dir=tmp_path / f"store-{folder.name}", embedder=embedder)
        engines.append(engine)
        registry.put(Root(uri=folder.as_uri(), folder=folder, engine=engine))
    try:
        yield registry, outer, inner
    finally:
        for engine in engines:
            engine.close()


def test_the_innermost_root_holds_a_path(registry: tuple[RootRegistry, Path, Path]) -> None:
    roots, outer, inner = registry
    found = roots.locate(inner / "borrowing.md")
    assert (found.root.folder, found.rel) == (inner, "borrowing.md")
    found = roots.locate(outer / "top.md")
    assert (found.root.folder, found.rel) == (outer, "top.md")
    owner = roots.owner(outer / "rust" / "borrowing.md")
    assert owner is not None and owner.folder == inner


def test_a_path_through_a_symlinked_folder_is_resolved_first(
    registry: tuple[RootRegistry, Path, Path], tmp_path: Path
) -> None:
    roots, outer, inner = registry
    link = tmp_path / "elsewhere"
    link.symlink_to(outer, target_is_directory=True)
    found = roots.locate(link / "rust" / "borrowing.md")
    assert (found.root.folder, found.rel) == (inner, "borrowing.md")


@pytest.mark.parametrize("path", ["/etc/passwd", "/tmp/../etc/passwd", "/\x00", "relative/../../x.md"])
def test_paths_outside_every_root_are_refused(registry: tuple[RootRegistry, Path, Path], path: str) -> None:
    roots, _, _ = registry
    with pytest.raises(OutsideRootError):
        roots.locate(path)


def test_store_checks_are_rate_limited_and_a_replacement_claimed_once(
    registry: tuple[RootRegistry, Path, Path],
) -> None:
    roots, outer, _ = registry
    root = roots.get(str(outer))
    assert root is not None
    assert roots.check_due(root, 100.0) and not roots.check_due(root, 100.0 + STORE_CHECK_INTERVAL / 2)
    assert roots.check_due(root, 100.0 + STORE_CHECK_INTERVAL)
    assert not root.store_replaced()
    root.store_path.unlink()
    assert root.store_replaced()
    assert roots.claim_replaced(root) and not roots.claim_replaced(root)


def test_counts_and_errors_are_read_back_consistently(registry: tuple[RootRegistry, Path, Path]) -> None:
    roots, outer, _ = registry
    root = roots.get(str(outer))
    assert root is not None
    roots.set_counts(root, 3, 7)
    assert roots.set_error(root, "disk on fire") is None
    assert roots.set_error(root, "still on fire") == "disk on fire"
    view = next(v for v in roots.views() if v.root is root)
    assert (view.files, view.chunks, view.error) == (3, 7, "still on fire")
    assert roots.known_files(str(outer)) == 3 and roots.known_files("/nowhere") == 0


@pytest.mark.parametrize(
    ("loaded", "model_error", "root_errors", "busy", "state"),
    [
        (False, None, [], True, "loading"),
        (True, None, [], True, "indexing"),
        (True, None, [], False, "ready"),
        (True, "no model", [], False, "error"),
        (True, None, ["/kb: read-only"], True, "error"),
        (False, None, ["/kb: read-only"], False, "error"),
    ],
)
def test_state_word(loaded: bool, model_error: str | None, root_errors: list[str], busy: bool, state: str) -> None:
    assert state_of(model_loaded=loaded, model_error=model_error, root_errors=root_errors, busy=busy) == state


def test_a_config_file_of_a_root_that_is_not_open_names_that_root(
    registry: tuple[RootRegistry, Path, Path], tmp_path: Path
) -> None:
    """The editor's event for a refused root's `.kbls.yaml` tries it again; not an open root's."""
    roots, outer, inner = registry
    waiting = tmp_path / "waiting"
    roots.refuse(RefusedRoot(waiting.as_uri(), waiting, "its store is inside it"))
    roots.refuse(RefusedRoot(outer.as_uri(), outer, "invalid config; served with the defaults"))
    entry = roots.waiting_for_config(waiting / CONFIG_FILE)
    assert entry is not None and entry.folder == waiting
    assert roots.waiting_for_config(waiting / "note.md") is None
    assert roots.waiting_for_config(outer / CONFIG_FILE) is None  # open: its own watcher reloads it
    assert roots.waiting_for_config(inner / CONFIG_FILE) is None  # open and never refused


def test_a_retired_root_is_closed_by_its_last_lease_and_leases_no_more(
    registry: tuple[RootRegistry, Path, Path], tmp_path: Path, embedder: Embedder
) -> None:
    """A root replaced while a search runs on it (`kbls index --rebuild` under the daemon) must not
    have its store closed under that search: closing SQLite connections in use crashed the daemon.
    Once retired it hands out no engine (the clients' "being reopened" error)."""
    _, outer, _ = registry
    engine = Engine(outer, store_dir=tmp_path / "store-retired", embedder=embedder)
    closed: list[str] = []
    engine.close = lambda: closed.append("closed")  # type: ignore[method-assign]
    root = Root(uri=outer.as_uri(), folder=outer, engine=engine)
    with root.lease() as first:
        with root.lease():
            root.retire()
            assert closed == []  # two leases in flight
            assert first.status().store  # the store still answers
            with pytest.raises(BeingReopenedError, match="being reopened"):
                root.lease().__enter__()
        assert closed == []  # one still held
    assert closed == ["closed"]  # closed by the last lease, once
    root.retire()
    assert closed == ["closed"]
    Engine.close(engine)
    idle = Root(uri="file:///idle", folder=outer / "idle", engine=engine)
    idle_closed: list[str] = []
    engine.close = lambda: idle_closed.append("at once")  # type: ignore[method-assign]
    idle.retire()
    assert idle_closed == ["at once"]  # no lease in flight: closed at once
    assert not idle.store_replaced()  # retired: being reopened already, never asked again


def test_a_read_after_close_cannot_open_the_store_again(tmp_path: Path, embedder: Embedder) -> None:
    """A late read of a closed store used to open a new connection to it, which kept a replaced
    store's file alive and was never closed."""
    (tmp_path / "kb").mkdir()
    engine = Engine(tmp_path / "kb", store_dir=tmp_path / "store", embedder=embedder)
    assert engine.store.counts().files == 0
    engine.close()
    with pytest.raises(StoreClosedError, match="was closed"):
        engine.store.counts()
    with pytest.raises(StoreClosedError):
        engine.store.open_connection()
