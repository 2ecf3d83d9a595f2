"""Issue 6, "Corrupt or foreign store": detected at start, told in plain words, rebuilt.

Four damages: a truncated store file, a file of garbage, a store of an older schema version
no migration reads and a store made with another model. Each is met by the CLI (`kbls index`, `kbls search`,
`kbls status`: a `kbls: ...` line on stderr, never a traceback) and by the daemon (a
`window/showMessage`, then it serves a rebuilt index).

A store of a later schema (written by a newer kbls) is not damaged: it is refused and left as it
is (setting it aside stranded the newer index and re-embedded everything at each switch).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.corpus import REPO, write_config
from tests.support.lsp_client import LspSession
from tests.support.processes import assert_no_traceback, run_kbls
from tests.support.store_check import check_store, connect

from kbls import __version__
from kbls.storage.schema import SCHEMA_VERSION
from kbls.storage.store import STORE_FILE

FIXTURES = REPO / "tests" / "fixtures" / "notes"


def _truncate(store: Path) -> None:
    path = store / STORE_FILE
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(size // 2)


def _garbage(store: Path) -> None:
    (store / STORE_FILE).write_bytes(os.urandom(64 * 1024))


def _set_meta(store: Path, key: str, value: str) -> None:
    conn = connect(store)
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
    conn.close()


def _other_schema(store: Path) -> None:
    _set_meta(store, "schema_version", "0")  # older than every migration


def _other_model(store: Path) -> None:
    conn = connect(store)
    conn.execute("UPDATE meta SET value = 'someone/other-model' WHERE key = 'model_id'")
    conn.close()


DAMAGES: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate, "garbage": _garbage, "other-schema": _other_schema, "other-model": _other_model,
}


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the fixture notes, indexed by the CLI; returns (root, store)."""
    root = tmp_path / "notes"
    shutil.copytree(FIXTURES, root)
    store = write_config(root)
    proc = run_kbls(["index", "--root", str(root)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    return root, store


def _expected_chunks(tmp_path: Path, root: Path) -> dict[str, list[tuple[str, str]]]:
    clean = tmp_path / "clean-store"
    proc = run_kbls(["index", "--root", str(root), "--store", str(clean)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    return check_store(clean, full_scan_done=True).chunks


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_cli_index_detects_reports_and_rebuilds(damage: str, indexed: tuple[Path, Path], tmp_path: Path) -> None:
    root, store = indexed
    DAMAGES[damage](store)
    proc = run_kbls(["index", "--root", str(root)], tmp_path)
    assert_no_traceback(proc)
    if damage == "other-model":
        # Switching model is the user's call: told what to run, nothing thrown away.
        assert proc.returncode == 1
        assert "kbls index --rebuild" in proc.stderr
        proc = run_kbls(["index", "--root", str(root), "--rebuild"], tmp_path)
        assert_no_traceback(proc)
    else:
        assert "moved to" in proc.stderr and "from scratch" in proc.stderr, proc.stderr
        assert list(store.glob(f"{STORE_FILE}.damaged-*")), "the damaged store was not kept aside"
    assert proc.returncode == 0, proc.stderr
    assert check_store(store, root, full_scan_done=True).chunks == _expected_chunks(tmp_path, root)


@pytest.mark.parametrize("command", ["search", "status"])
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_cli_reads_of_a_damaged_store_answer_in_plain_words(
    damage: str, command: str, indexed: tuple[Path, Path], tmp_path: Path,
) -> None:
    root, store = indexed
    DAMAGES[damage](store)
    args = [command, "ownership", "--root", str(root)] if command == "search" else [command, "--root", str(root)]
    proc = run_kbls(args, tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.returncode == 0 or proc.stderr.startswith("kbls: "), proc.stderr


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_daemon_shows_a_message_and_serves_a_rebuilt_index(damage: str, indexed: tuple[Path, Path], tmp_path: Path) -> None:
    root, store = indexed
    DAMAGES[damage](store)
    daemon = LspSession([root], tmp_path)
    try:
        daemon.wait_ready()
        assert daemon.alive()
        shown = " ".join(daemon.shown())
        assert "store" in shown and ("rebuil" in shown or "indexed again" in shown or "re-index" in shown), shown
        assert "Traceback" not in daemon.log_tail(400)
        hits = daemon.search("who owns a value after it is moved").hits
        assert hits and hits[0].path.startswith("rust/")
    finally:
        daemon.close()
    assert check_store(store, root).chunks == _expected_chunks(tmp_path, root)


@pytest.mark.slow
def test_a_store_held_by_a_stalled_writer_is_not_taken_for_a_damaged_one(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    """A writer stopped mid-transaction (Ctrl+Z on `kbls index`) holds the store's write lock
    past SQLite's 30 s busy timeout; a second process must wait or give up, never set aside
    (and so re-embed) a healthy store."""
    root, store = indexed
    holder = connect(store)
    holder.execute("BEGIN IMMEDIATE")
    try:
        proc = run_kbls(["search", "ownership", "--root", str(root)], tmp_path, timeout=120)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert_no_traceback(proc)
    assert not list(store.glob(f"{STORE_FILE}.damaged-*")), proc.stderr
    assert proc.returncode == 0 or proc.stderr.startswith("kbls: "), proc.stderr


def test_two_roots_naming_one_store_are_refused_and_the_first_index_survives(tmp_path: Path) -> None:
    """Issue 14: indexing B into A's store replaced A's rows; searching A then returned B's notes."""
    shared = tmp_path / "shared-store"
    first, second = tmp_path / "first", tmp_path / "second"
    for root, word in ((first, "aardvark"), (second, "bandicoot")):
        root.mkdir()
        (root / "n1.md").write_text(f"# {word.title()}\n\nNotes about the {word}.\n")
        write_config(root, store=str(shared))
    assert run_kbls(["index", "--root", str(first)], tmp_path).returncode == 0
    proc = run_kbls(["index", "--root", str(second)], tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert str(first) in proc.stderr and str(second) in proc.stderr and "`store:`" in proc.stderr, proc.stderr
    for command in (["status"], ["search", "bandicoot"]):  # read-only commands refuse too
        proc = run_kbls([*command, "--root", str(second)], tmp_path)
        assert proc.returncode == 1 and str(first) in proc.stderr, proc.stderr
    proc = run_kbls(["search", "aardvark", "--root", str(first), "--mode", "lexical", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [h["path"] for h in json.loads(proc.stdout)] == ["n1.md"] and "Aardvark" in proc.stdout


@pytest.mark.parametrize("command", [["status"], ["search", "anything"], ["related", "a.md"]])
def test_read_only_commands_on_a_never_indexed_root_create_no_store(tmp_path: Path, command: list[str]) -> None:
    """Issue 14: `kbls status` on a root never indexed created its store folder."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nsome text\n")
    store = write_config(root)
    cache = tmp_path / "xdg-cache"
    if command[0] == "related":
        command = ["related", str(root / "a.md")]
    proc = run_kbls([*command, "--root", str(root)], tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert not store.exists()
    assert not any(cache.rglob("*.sqlite3*")), "a store was created in the user cache"
    if command[0] == "status":
        assert "files:     0" in proc.stdout
    if command[0] == "search":
        assert "run `kbls index` first" in proc.stderr


def _newer(store: Path) -> bytes:
    """Make the store one a newer kbls wrote; returns its bytes (it must stay as it is)."""
    _set_meta(store, "schema_version", str(SCHEMA_VERSION + 1))
    _set_meta(store, "kbls_version", "9.9.0")
    return (store / STORE_FILE).read_bytes()


def _says_newer(text: str) -> bool:
    return (
        f"kbls 9.9.0 (store schema version {SCHEMA_VERSION + 1})" in text
        and f"this kbls {__version__} reads schema version {SCHEMA_VERSION}" in text
        and "kbls index --rebuild" in text and "upgrade" in text
    )


def test_cli_refuses_a_store_of_a_newer_kbls_and_leaves_it_as_it_is(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    root, store = indexed
    before = _newer(store)
    for command in (["index"], ["index", "--force"], ["search", "ownership"], ["status"]):
        proc = run_kbls([*command, "--root", str(root)], tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 1 and _says_newer(proc.stderr), (command, proc.stderr)
    assert (store / STORE_FILE).read_bytes() == before, "the newer store was changed"
    assert not list(store.glob(f"{STORE_FILE}.*-*")), "the newer store was set aside"
    proc = run_kbls(["index", "--root", str(root), "--rebuild"], tmp_path)  # the way out it names
    assert proc.returncode == 0, proc.stderr
    assert check_store(store, root, full_scan_done=True).chunks == _expected_chunks(tmp_path, root)


def test_daemon_lists_a_root_with_a_newer_store_as_refused_and_stays_up(
    indexed: tuple[Path, Path], tmp_path: Path
) -> None:
    root, store = indexed
    before = _newer(store)
    other = tmp_path / "other"
    shutil.copytree(FIXTURES / "rust", other)
    write_config(other)
    with LspSession([root, other], tmp_path) as daemon:
        def refused() -> str | None:
            listed = next((r for r in daemon.status().roots if r.uri == root.as_uri()), None)
            return listed.error if listed is not None and listed.error else None

        error = daemon.wait_for(refused, 90, "the root listed as refused")
        assert _says_newer(error), error
        assert any(_says_newer(m) for m in daemon.shown()), daemon.shown()
        daemon.wait_for(  # the other root is served meanwhile (the state stays `error`)
            lambda: any(r.uri == other.as_uri() and r.files > 0 for r in daemon.status().roots)
            and daemon.status().queue == 0, 120, "the other root to be indexed",
        )
        hits = daemon.search("who owns a value after it is moved").hits
        assert daemon.alive() and hits and hits[0].uri.startswith(other.as_uri()), hits
        assert "Traceback" not in daemon.log_tail(400)
    assert (store / STORE_FILE).read_bytes() == before, "the newer store was changed"
    assert not list(store.glob(f"{STORE_FILE}.*-*")), "the newer store was set aside"
