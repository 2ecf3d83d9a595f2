"""The store's writer lock (`writer.lock`) that kbls may not open: a plain error, not a traceback.

`WriterLock.hold` opened the lock file bare: a `writer.lock` kbls may not write (left by another
user, a store folder shared read-only) raised PermissionError out of `kbls index` and the
daemon's jobs. It is a `StoreReadOnlyError` now (the daemon keeps serving and retries); anything
else in the way (a folder of that name) is a `StoreError`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from tests.support.corpus import write
from tests.support.files import filesystem_uid
from tests.support.processes import assert_no_traceback, run_kbls

from kbls.engine import Engine
from kbls.errors import StoreReadOnlyError
from kbls.indexing.embed import Embedder
from kbls.storage.store import LOCK_FILE

NOBODY = 65534


def test_a_writer_lock_kbls_may_not_open_is_a_read_only_store_error(embedder: Embedder) -> None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to act as another user (setfsuid)")
    base = Path(tempfile.mkdtemp(prefix="kbls-lock-"))  # not under tmp_path: its parents are 0700 root
    try:
        root, store = base / "notes", base / "store"
        write(root, "glacier.md", "# Glacier trip\n\nCrampons and an ice axe for the crevasse field.\n")
        engine = Engine(root, store_dir=store, embedder=embedder)
        engine.index()
        for path in [base, *base.rglob("*")]:
            os.chown(path, NOBODY, NOBODY)
        os.chown(store / LOCK_FILE, 0, 0)  # the lock file alone is another user's, mode 0644
        (store / LOCK_FILE).chmod(0o644)
        write(root, "bread.md", "# Sourdough\n\nFeed the starter.\n")
        os.chown(root / "bread.md", NOBODY, NOBODY)
        refused = pytest.raises(StoreReadOnlyError, match=f"may not open its lock file {LOCK_FILE} for writing")
        with filesystem_uid(NOBODY), refused:
            engine.index()
        assert [h.path for h in engine.search("crampons ice axe", limit=1).hits] == ["glacier.md"]
        engine.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_kbls_index_with_a_folder_in_place_of_the_lock_file_says_so(tmp_path: Path) -> None:
    root, store = tmp_path / "notes", tmp_path / "store"
    write(root, "glacier.md", "# Glacier trip\n\nCrampons and an ice axe.\n")
    where = ["--root", str(root), "--store", str(store)]
    assert run_kbls(["index", *where], tmp_path).returncode == 0
    (store / LOCK_FILE).unlink()
    (store / LOCK_FILE).mkdir()
    proc = run_kbls(["index", "--force", *where], tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert f"kbls: cannot open the store's lock file {store / LOCK_FILE}: Is a directory" in proc.stderr, proc.stderr
