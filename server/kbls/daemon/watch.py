"""Watch one workspace root for changes made outside the editor (git checkout, sync tools).

A watchdog observer per root feeds a debouncer: events are collected until the root has been
quiet for `delay` seconds (or `max_wait` has passed since the first one), then handed over as one
batch. Read-only events (`opened`, `closed_no_write`) are dropped: the daemon reads every file it
indexes, and counting those reads as changes would re-trigger indexing forever. Directory
events (a folder moved, deleted or created) ask for a rescan of the root instead of a file list:
the scan is incremental, so that costs a walk and a stat per file. A change of the root's
`.kbls.yaml` calls `on_config` (the daemon reopens the root with the new settings).

A root that could not be opened (its config refused) has no tree to watch: `ConfigWatcher`
watches its folder alone, not recursively, for its `.kbls.yaml`, so a fixed config opens it.

The editor may report the same changes (`workspace/didChangeWatchedFiles`, as `FileChange`s):
`RootWatcher.changed` takes them into the same debouncer, so a change both report is one batch,
and they still arrive when the observer could not start (no inotify watch left) or is turned off
(`KBLS_NO_WATCH=1`). A change both report in two batches is read twice and embedded once: the
index skips a file whose size, time and hash it already has.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from watchdog.events import (
    EVENT_TYPE_CLOSED,
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_MOVED,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from kbls.config import CONFIG_FILE
from kbls.indexing.scan import ALWAYS_SKIPPED_DIRS

log = logging.getLogger(__name__)

#: events that mean the content or the name of a file changed; everything else is ignored.
WRITE_EVENTS = {EVENT_TYPE_CREATED, EVENT_TYPE_MODIFIED, EVENT_TYPE_DELETED, EVENT_TYPE_MOVED, EVENT_TYPE_CLOSED}

#: callback(changed root-relative paths, rescan the whole root)
BatchFn = Callable[[set[str], bool], None]

#: set to 1, the daemon watches no root itself: saves and the editor's file events still index.
NO_WATCH_ENV = "KBLS_NO_WATCH"

ChangeKind = Literal["created", "changed", "deleted"]
#: the watchdog event each kind of editor change stands for.
_EVENT_OF: dict[ChangeKind, str] = {
    "created": EVENT_TYPE_CREATED,
    "changed": EVENT_TYPE_MODIFIED,
    "deleted": EVENT_TYPE_DELETED,
}


@dataclass(frozen=True)
class FileChange:
    """A change the editor saw in a workspace folder (a file or a folder: it does not say)."""

    path: Path
    kind: ChangeKind


def own_watch_enabled() -> bool:
    """False when the user turned the daemon's own watchers off (`KBLS_NO_WATCH=1`)."""
    return os.environ.get(NO_WATCH_ENV, "") != "1"


class Debouncer:
    """Collects paths and calls `flush(paths, rescan)` once events stop for `delay` seconds."""

    def __init__(self, flush: BatchFn, delay: float = 0.2, max_wait: float = 2.0) -> None:
        self._flush = flush
        self.delay = delay
        self.max_wait = max_wait
        self._paths: set[str] = set()
        self._rescan = False
        self._first = 0.0
        self._last = 0.0
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="kbls-debounce", daemon=True)
        self._thread.start()

    def add(self, paths: set[str], rescan: bool = False) -> None:
        with self._cond:
            now = time.monotonic()
            if not self._paths and not self._rescan:
                self._first = now
            self._paths |= paths
            self._rescan = self._rescan or rescan
            self._last = now
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopped and not (self._paths or self._rescan):
                    self._cond.wait()
                if self._stopped:
                    return
                now = time.monotonic()
                due = min(self._last + self.delay, self._first + self.max_wait)
                if now < due:
                    self._cond.wait(due - now)
                    continue
                paths, rescan = self._paths, self._rescan
                self._paths, self._rescan = set(), False
            try:
                self._flush(paths, rescan)
            except Exception:  # a failing callback must not end the watch
                log.exception("cannot hand over a batch of %d changed paths", len(paths))

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(timeout=2)


def _observer(handler: FileSystemEventHandler, folder: Path, *, recursive: bool) -> BaseObserver:
    """A daemon-thread observer of `folder` (not started)."""
    observer = Observer()
    observer.daemon = True
    observer.schedule(handler, str(folder), recursive=recursive)
    return observer


def _stop(observer: BaseObserver | None, debouncer: Debouncer, watched: Path) -> None:
    """Stop a watcher's observer (if it started), then its debouncer; never raises into shutdown."""
    try:
        if observer is not None:
            observer.stop()
            observer.join(timeout=2)
    except Exception:
        log.exception("cannot stop the watcher of %s", watched)
    debouncer.stop()


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: RootWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in WRITE_EVENTS:
            return  # opened, closed_no_write, attrib: nothing was written
        try:
            self.watcher.handle(event)
        except Exception:  # an escaping exception would end the observer thread for good
            log.exception("cannot handle %s", event)


class RootWatcher:
    """One root's changes, from its own observer (once `observe` started it) and from the editor
    (`changed`), batched by one debouncer. `wanted(rel)` applies the root's include/exclude rules."""

    def __init__(
        self,
        root: Path,
        wanted: Callable[[str], bool],
        on_batch: BatchFn,
        *,
        ignored_dirs: tuple[Path, ...] = (),
        delay: float = 0.2,
        on_config: Callable[[], None] | None = None,
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self.wanted = wanted
        self.on_config = on_config
        self.on_batch = on_batch
        self.ignored_dirs = tuple(Path(os.path.abspath(d)) for d in ignored_dirs)
        self.debouncer = Debouncer(self._flush, delay=delay)
        self.observer: BaseObserver | None = None

    def observe(self) -> None:
        """Watch the root's tree too. Raises (OSError: e.g. no inotify watch left) when it cannot;
        the editor's changes are taken all the same."""
        observer = _observer(_Handler(self), self.root, recursive=True)
        observer.start()
        self.observer = observer

    def stop(self) -> None:
        _stop(self.observer, self.debouncer, self.root)

    def _flush(self, paths: set[str], rescan: bool) -> None:
        if CONFIG_FILE in paths and self.on_config is not None:
            log.info("%s changed: reopening %s", CONFIG_FILE, self.root)
            self.on_config()  # reopening rescans the root, which covers `paths` too
            return
        self.on_batch(paths, rescan)

    def _relative(self, raw: str | bytes | Path) -> str | None:
        path = Path(os.fsdecode(raw))
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return None
        if any(part in ALWAYS_SKIPPED_DIRS for part in rel.parts):
            return None
        if any(path == d or d in path.parents for d in self.ignored_dirs):
            return None  # the store's own writes
        return rel.as_posix()

    def handle(self, event: FileSystemEvent) -> None:
        """An event of the root's own observer."""
        sources = [event.src_path]
        if event.event_type == EVENT_TYPE_MOVED:
            sources.append(event.dest_path)
        rels = [r for r in (self._relative(s) for s in sources) if r]
        if rels:
            self._take(rels, event.event_type, directory=event.is_directory)

    def changed(self, rel: str, kind: ChangeKind) -> None:
        """A change the editor saw at root-relative `rel`, taken as the observer's events are.

        The editor does not say whether a folder or a file changed: an existing folder is one.
        A deleted path is a file when the rules would index it, or it is the config or a
        `.gitignore`, or its name has a suffix (`x.png`, `.a.md.swp`: a temporary file must not
        rescan the root). Otherwise it may have been a folder of notes: the observer, when it
        runs, reports it as what it was; without one the root is rescanned (incrementally).
        A deleted folder named with a dot leaves its notes to the next full scan then.
        """
        checked = self._relative(self.root / rel)
        if checked is None:
            return
        if kind != "deleted":
            directory = (self.root / checked).is_dir()
        elif self.wanted(checked) or _rules_file(checked) or PurePosixPath(checked).suffix:
            directory = False
        elif self.observer is not None:
            return  # a file or a folder: the observer knows, and reports it
        else:
            directory = True
        self._take([checked], _EVENT_OF[kind], directory=directory)

    def _take(self, rels: list[str], event_type: str, *, directory: bool) -> None:
        """Hand the changed paths to the debouncer: a rescan, a config change or the files."""
        if directory:
            # A folder's own `modified` fires for every change inside it: the files report
            # themselves. Created, moved or deleted folders are rescanned.
            if event_type != EVENT_TYPE_MODIFIED:
                log.debug("folder %s %s: rescan", rels[0], event_type)
                self.debouncer.add(set(), rescan=True)
            return
        if CONFIG_FILE in rels and self.on_config is not None:
            # Collected with the batch (it is no note: `_take` never adds it otherwise), so a
            # change both the observer and the editor report is one reload, once they are quiet.
            self.debouncer.add({CONFIG_FILE}, rescan=True)
            return
        if any(_is_gitignore(r) for r in rels):
            # What is ignored changed: only a full scan adds or drops the files concerned.
            self.debouncer.add(set(), rescan=True)
            return
        wanted = {r for r in rels if self.wanted(r)}
        if wanted:
            log.debug("%s: %s", event_type, ", ".join(sorted(wanted)))
            self.debouncer.add(wanted)


def _is_gitignore(rel: str) -> bool:
    return rel == ".gitignore" or rel.endswith("/.gitignore")


def _rules_file(rel: str) -> bool:
    """The root's config or a `.gitignore`: files that change what is indexed, not notes."""
    return rel == CONFIG_FILE or _is_gitignore(rel)


class _ConfigHandler(FileSystemEventHandler):
    def __init__(self, watcher: ConfigWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in WRITE_EVENTS or event.is_directory:
            return
        try:
            self.watcher.handle(event)
        except Exception:  # an escaping exception would end the observer thread for good
            log.exception("cannot handle %s", event)


class ConfigWatcher:
    """Calls `on_change` (debounced) when `folder/.kbls.yaml` is written, created, moved or deleted.

    Only the folder itself is watched (one inotify watch, not the tree): the root it belongs to
    is not open, so nothing else in it is of interest until the config lets it open.
    """

    def __init__(self, folder: Path, on_change: Callable[[], None], *, delay: float = 0.2) -> None:
        self.config = Path(os.path.abspath(folder)) / CONFIG_FILE
        self.debouncer = Debouncer(lambda _paths, _rescan: on_change(), delay=delay)
        self.observer = _observer(_ConfigHandler(self), self.config.parent, recursive=False)

    def start(self) -> None:
        self.observer.start()

    def stop(self) -> None:
        _stop(self.observer, self.debouncer, self.config)

    def handle(self, event: FileSystemEvent) -> None:
        sources = [event.src_path]
        if event.event_type == EVENT_TYPE_MOVED:
            sources.append(event.dest_path)  # an editor's save: a temporary file renamed over it
        if any(Path(os.fsdecode(s)) == self.config for s in sources):
            log.debug("%s: %s", self.config, event.event_type)
            self.debouncer.add(set(), rescan=True)
