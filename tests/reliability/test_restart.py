"""Issue 6: "re-embedding on every start" is a failure users of this class of tool report.
A restarted daemon, a touched file (new mtime, same bytes) and `kbls index --force` must embed
nothing that is stored already.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.support.corpus import make_corpus, write_config
from tests.support.lsp_client import LspSession
from tests.support.processes import run_kbls


def test_restarts_and_touched_files_embed_nothing(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    notes = make_corpus(root, 40)
    write_config(root)
    assert run_kbls(["index", "--root", str(root)], tmp_path).returncode == 0
    later = time.time() + 5
    for path in notes:
        os.utime(path, (later, later))
    proc = run_kbls(["index", "--root", str(root), "--force", "--json"], tmp_path)
    assert proc.returncode == 0 and '"embedded": 0' in proc.stdout, proc.stdout + proc.stderr
    for attempt in range(2):
        daemon = LspSession([root], tmp_path, name=f"restart-{attempt}")
        try:
            daemon.wait_ready()
            for path in notes[:10]:  # the watcher sees writes of the same bytes
                path.write_bytes(path.read_bytes())
            time.sleep(1.0)
            status = daemon.wait_ready()
            assert status.embedded_since_start == 0, status
            assert status.roots[0].files == len(notes)
        finally:
            daemon.close()
