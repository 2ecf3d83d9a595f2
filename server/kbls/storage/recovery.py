"""Opening a store that may be damaged or of another model: set it aside and start afresh.

A damaged store is never repaired in place: its files are renamed to
`kbls.sqlite3.<why>-<time>` (evidence kept, name freed) and the notes are indexed again.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Literal

from kbls.errors import CorruptStoreError, ModelMismatchError, StoreError
from kbls.storage.store import STORE_FILE, Store

log = logging.getLogger(__name__)

#: what to do with a store of another model: raise ModelMismatchError, or set it aside.
OnModelMismatch = Literal["raise", "rebuild"]

_SIDE_FILES = ("-wal", "-shm")


def open_or_recover(
    directory: Path,
    *,
    model_id: str,
    dimension: int,
    model_sha256: str | None,
    on_model_mismatch: str = "raise",
    check: bool = False,
    root: Path | None = None,
    read_only: bool = False,
) -> tuple[Store, str | None]:
    """Open the store in `directory`; a damaged one (or one of another model, when
    `on_model_mismatch == "rebuild"`) is set aside and a new one started. A read-only open
    (see `Store`) changes nothing on disk, so it recovers nothing: it raises.

    :param root: the workspace root whose index this is (see `Store`).
    :returns: the store and, when one was set aside, a plain-words notice for the user.
    :raises StoreRootMismatchError: never set aside: the store is another root's, and fine.
    """

    def open_store() -> Store:
        return Store(
            directory, model_id=model_id, dimension=dimension, model_sha256=model_sha256, check=check,
            root=root, read_only=read_only,
        )

    if read_only:
        return open_store(), None
    try:
        return open_store(), None
    except ModelMismatchError as exc:
        if on_model_mismatch != "rebuild":
            raise
        aside = set_aside(directory, "other-model")
        notice = f"{exc} The old store was moved to {aside.name}; the notes are re-indexed with the new model."
    except CorruptStoreError as exc:
        aside = set_aside(directory, "damaged")
        notice = f"{exc}. It was moved to {aside.name} and the notes are indexed again from scratch."
    log.info("%s", notice)
    return open_store(), notice


def set_aside(directory: Path, why: str) -> Path:
    """Rename the store file to `kbls.sqlite3.<why>-<time>` and drop its WAL and shm files.
    The `Store` that failed to open has closed its connections already (see `Store.__init__`)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = directory / STORE_FILE
    aside = directory / f"{STORE_FILE}.{why}-{stamp}"
    try:
        if base.exists():
            base.replace(aside)
        for suffix in _SIDE_FILES:
            Path(str(base) + suffix).unlink(missing_ok=True)
    except OSError as exc:  # a read-only disk: say so rather than die of a traceback
        raise StoreError(f"cannot set the store {base} aside ({why}): {exc.strerror or exc}") from None
    return aside


def delete_store(directory: Path) -> Path:
    """Delete the store files in `directory` (`kbls index --rebuild`); returns `directory`."""
    try:
        for name in (STORE_FILE, *(STORE_FILE + s for s in _SIDE_FILES)):
            (directory / name).unlink(missing_ok=True)
    except OSError as exc:  # a read-only disk, a folder kbls may not write
        raise StoreError(f"cannot delete the store in {directory}: {exc.strerror or exc}") from None
    return directory
