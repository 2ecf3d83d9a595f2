"""A daemon started on a store that is already read-only (a mounted snapshot, a disk remounted
read-only after errors) serves its searches.

Before, the daemon refused the whole root: the editor got nothing from it while `kbls search`
answered from the same store. Now it opens the store read-only, answers from it, lists the root
with "indexing ... is paused" in `kb/status`, and opens it for writing once the disk can be
written again (the reopen timer of a full disk), so saved notes are indexed.

The tmpfs is mounted as root or through passwordless `sudo -n`; elsewhere the test is skipped.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from tests.support.corpus import write, write_config
from tests.support.files import remount
from tests.support.lsp_client import LspSession
from tests.support.processes import run_kbls

from kbls.protocol import wire

pytestmark = pytest.mark.slow


def _status_if(daemon: LspSession, *, paused: bool) -> wire.StatusResult | None:
    """`kb/status` once its one root is listed with an error (`paused`), or once it is ready."""
    status = daemon.status()
    if not status.roots:
        return None
    if paused:
        return status if status.roots[0].error else None
    return status if status.state == "ready" and status.queue == 0 else None


def _assert_served_read_only(daemon: LspSession, glacier: Path) -> None:
    """kb/related, hover, kb/notes and kb/tags answer from the read-only store."""
    related = daemon.request("kb/related", {"uri": glacier.as_uri()})
    assert "bread.md" in [hit["path"] for hit in related["hits"]], related
    hover = daemon.raw_request(
        "textDocument/hover", {"textDocument": {"uri": glacier.as_uri()}, "position": {"line": 0, "character": 0}}
    )
    assert hover is not None and "bread" in hover["contents"]["value"], hover
    notes = msgspec.convert(daemon.request("kb/notes", {}), wire.NotesResult)
    assert sorted(note.path for note in notes.notes) == ["bread.md", "glacier.md"], notes
    tags = msgspec.convert(daemon.request("kb/tags", {}), wire.TagsResult)
    assert [(tag.name, tag.count) for tag in tags.tags][:1] == [("trip", 2)], tags


def test_daemon_started_on_a_read_only_store_serves_it_and_indexes_once_writable(
    tmp_path: Path, disk: Path
) -> None:
    root = tmp_path / "notes"
    glacier = write(
        root, "glacier.md",
        "---\ntags: [trip]\n---\n# Glacier trip\n\nCrampons and an ice axe for the crevasse field; "
        "[bread](bread.md) for the hut.\n",
    )
    write(root, "bread.md", "---\ntags: [trip, food]\n---\n# Sourdough\n\nFeed the starter and bake the loaf.\n")
    store = disk / "store"
    write_config(root, store=str(store))
    proc = run_kbls(["index", "--root", str(root)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    before = sorted(p.name for p in store.iterdir())
    remount(disk, "ro")

    daemon = LspSession([root], tmp_path)
    try:
        status = daemon.wait_for(lambda: _status_if(daemon, paused=True), 60, "the root listed as paused")
        assert status.state == "error"
        assert status.roots[0].files == 2, status
        error = status.roots[0].error or ""
        assert "paused" in error and "cannot be written" in error, error
        assert daemon.paths_found("crampons ice axe", mode="lexical")[0] == "glacier.md"
        _assert_served_read_only(daemon, glacier)
        daemon.wait_for(lambda: any("paused" in m for m in daemon.shown()), 30, "a message that indexing is paused")
        shown = [m for m in daemon.shown() if "paused" in m]
        assert len(shown) == 1 and "resumes once the store can be written again" in shown[0], daemon.shown()

        kayak = write(root, "kayak.md", "# Sea kayaking\n\nA spray skirt and a bilge pump for the paddle out.\n")
        daemon.save(kayak)
        assert daemon.alive()
        assert "kayak.md" not in daemon.paths_found("spray skirt bilge pump", mode="lexical")

        remount(disk, "rw")
        daemon.wait_for(
            lambda: "kayak.md" in daemon.paths_found("spray skirt bilge pump", mode="lexical"), 60,
            "the saved note indexed once the store can be written",
        )
        status = daemon.wait_for(lambda: _status_if(daemon, paused=False), 60, "the root ready")
        assert status.roots[0].error is None and status.roots[0].files == 3, status
        assert any("can be written again" in m for m in daemon.shown()), daemon.shown()
        assert daemon.status().embedded_since_start >= 1
        assert daemon.alive()
    finally:
        daemon.close()
    assert not [p for p in store.iterdir() if p.name not in before and "damaged" in p.name]
