"""The shared daemon's reference counts of open folders, under clients that come and go at once."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from kbls.daemon.host import SharedDaemon


def test_a_folder_released_by_one_client_as_another_takes_it_stays_open(tmp_path: Path) -> None:
    """A window closes while another opens on the same folder: the last word must be "open".

    The count drops to 0 and rises to 1 under the lock, but the close and the open were asked
    for after it was let go: the close could land after the open and leave the new client with
    a closed folder. The close is slowed here so the open runs inside that gap every time.
    """
    folder = tmp_path / "notes"
    folder.mkdir()
    host = SharedDaemon(watch=False)  # not started: the queue keeps what was asked, in order
    host.acquire(folder.as_uri(), folder)
    close = host.daemon.remove_root
    closing = threading.Event()

    def slow_close(path: Path | str) -> None:
        closing.set()
        time.sleep(0.3)
        close(path)

    host.daemon.remove_root = slow_close  # type: ignore[method-assign]  # widens the race window
    leaving = threading.Thread(target=host.release, args=(folder,))
    leaving.start()
    assert closing.wait(5)
    host.acquire(folder.as_uri(), folder)  # the other window, while the first one's close is on its way
    leaving.join(5)
    assert host.daemon._worker.is_known(str(folder)), "the folder a client holds was closed"
