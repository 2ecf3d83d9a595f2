"""`Daemon`: the facade the LSP layer drives: roots in, saves and reindex requests, queries out.

It wires the parts together (`roots` registry, `jobs` queue run by the `worker`, `status`
reporter, root `opener`) and fans queries out to the roots' engines on the caller's thread. It
knows nothing of LSP or the wire: answers are typed (`kbls.daemon.answers`) and
`kbls.lsp.convert` turns them into `kb/*` structs. The benchmarks and tests drive it directly.

Several daemons may share a store: the engine returns `busy` while another process holds the
writer lock; the job is retried and searches keep answering meanwhile.

One short method per request of the LSP layer (and of the per-user daemon); the work behind
each lives in the modules above. Every read of an engine runs on a lease (`Daemon.read`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, TypeVar

from kbls import __version__
from kbls.config import SearchConfig
from kbls.daemon import listings
from kbls.daemon.answers import (
    DaemonStatus,
    IndexState,
    InRoot,
    Listener,
    NotesAnswer,
    NotesRequest,
    NullListener,
    RootHit,
    RootReport,
    SafeListener,
    SearchAnswer,
    SearchRequest,
    StoreUnavailableError,
    TagsAnswer,
)
from kbls.daemon.jobs import Job, OpenRequest
from kbls.daemon.opener import RootOpener
from kbls.daemon.roots import Located, Root, RootRegistry, folder_path
from kbls.daemon.status import StatusReporter, joined, refusal, refused_status, state_of
from kbls.daemon.watch import FileChange, own_watch_enabled
from kbls.daemon.worker import STORE_REPLACED, Worker
from kbls.engine import Engine
from kbls.errors import BeingReopenedError, OutsideRootError, QueryError
from kbls.indexing.giveway import READS
from kbls.limits import MAX_LIMIT, MAX_TAGS, RELATED_LIMIT
from kbls.links.suggest import LinkQuery, Resolved, Suggestions
from kbls.links.syntax import LinkRef
from kbls.results import Hit, RootStatus, SqliteInfo

log = logging.getLogger(__name__)
T = TypeVar("T")

#: results per search when no root is open to say.
DEFAULT_LIMIT = SearchConfig().limit


class Daemon:
    """Roots, engines and the index worker of one `kbls serve` process.

    :param listener: receives state changes, progress and messages.
    :param overrides: config keys from `initializationOptions`, applied to every root.
    :param watch: start a watchdog observer per root (unless `KBLS_NO_WATCH=1`).
    :param debounce: seconds of quiet before a batch of watcher events is indexed.
    """

    def __init__(
        self,
        listener: Listener | None = None,
        overrides: dict[str, Any] | None = None,
        *,
        watch: bool = True,
        debounce: float = 0.2,
    ) -> None:
        self._listener = SafeListener(listener or NullListener())
        self._registry = RootRegistry()
        self._reporter = StatusReporter(self._listener, self.index_state)
        self._opener = RootOpener(
            self._listener, self._registry, overrides or None, watch=watch and own_watch_enabled(), debounce=debounce,
            on_batch=lambda key, paths, rescan: self._worker.submit(key, Job(full=rescan, files=paths)),
            on_config=self.reopen_root, retry_open=self._retry_open,
        )
        self._worker = Worker(self._registry, self._opener, self._reporter, self._listener)

    # -- lifecycle -----------------------------------------------------------------------------
    def configure(self, overrides: dict[str, Any] | None) -> None:
        """Config keys (from `initializationOptions`) applied to every root; call before `start`."""
        self._opener.overrides = overrides or None

    def start(self, folders: list[tuple[str, Path]]) -> None:
        """Queue the roots and start the worker (returns at once)."""
        for uri, path in folders:
            self.add_root(uri, path)
        self._worker.start()

    def shutdown(self, timeout: float = 5.0) -> None:
        self._worker.stop(timeout)
        for root in self._registry.pop_all():
            self._opener.close(root)

    def add_root(self, uri: str, path: Path | str) -> None:
        self._worker.open_root(OpenRequest(uri, folder_path(path)))

    def reopen_root(self, uri: str, path: Path | str) -> None:
        """Close and open a root again (its `.kbls.yaml` changed); the scan is incremental."""
        self._listener.log(logging.INFO, f"kbls: {path}: configuration changed, reloading it")
        self._worker.reopen_root(OpenRequest(uri, folder_path(path), reopen=True))

    def _retry_open(self, uri: str, path: Path) -> None:
        """Try a refused root again (its config file changed, or its store may be writable now);
        an open root whose new config was refused is reopened, so the fixed config takes effect."""
        folder = folder_path(path)
        serving = self._registry.get(str(folder)) is not None
        self._worker.open_root(OpenRequest(uri, folder, reopen=serving))

    def remove_root(self, path: Path | str) -> None:
        key = str(folder_path(path))
        self._registry.cancel_reopen(key)
        self._worker.close_root(key)

    # -- indexing requests ---------------------------------------------------------------------
    def file_saved(self, path: Path | str) -> bool:
        """Re-index one saved file next (ahead of any full scan). False if it is not indexed."""
        try:
            found = self.locate(path)
        except OutsideRootError:
            return False
        if not found.root.scanner.wanted(found.rel):
            return False
        self._worker.submit(found.root.key, Job(files={found.rel}))
        return True

    def note_opened(self, path: Path | str, opened: bool = True) -> None:
        """An editor opened (`opened`) or closed a note: open notes are embedded first."""
        try:
            found = self.locate(path)
        except OutsideRootError:
            return
        self._worker.note_opened(found.root.key, found.rel, opened)

    def files_changed(self, changes: Collection[FileChange]) -> None:
        """Changes the editor saw (`workspace/didChangeWatchedFiles`): each goes to its root's
        watcher, batched with the root's own events (`kbls.daemon.watch`); a refused root's
        config file tries that root again, as its config watcher would."""
        for change in changes:
            refused = self._registry.waiting_for_config(change.path)
            if refused is not None:
                self._retry_open(refused.uri, refused.folder)
                continue
            try:
                found = self.locate(change.path)
            except OutsideRootError:
                continue
            watcher = found.root.watcher  # set before the root was published, never reassigned
            if watcher is not None:
                watcher.changed(found.rel, change.kind)

    def reindex(self, paths: list[Path] | None, force: bool = False, folders: Collection[Path] | None = None) -> int:
        """Queue `paths` (None: every root, or every root within `folders`); returns the files queued.

        :raises OutsideRootError: for a path outside every root (nothing is queued then).
        """
        if paths is None:
            queued = 0
            for view in self._registry.views():
                if not within(view.root, folders):
                    continue
                self._worker.submit(view.root.key, Job(full=True, force=force, progress=True))
                queued += view.files
            return queued
        located = [self.locate(p) for p in paths]
        for found in located:
            self._worker.submit(found.root.key, Job(files={found.rel}, force=force, progress=True))
        return len(located)

    # -- state ---------------------------------------------------------------------------------
    def index_state(self, message: str = "") -> IndexState:
        """The index as a whole now: state word, pending files, counts and any error."""
        queue = self._worker.view()
        views = self._registry.views()
        errors = [f"{v.root.folder}: {v.error}" for v in views if v.error]
        errors += [refusal(r) for r in self._registry.refused_views()]
        if queue.model_error is not None:
            errors.insert(0, f"the model cannot be loaded: {queue.model_error}")
        state = state_of(
            model_loaded=queue.model_loaded, model_error=queue.model_error, root_errors=errors, busy=not queue.idle
        )
        return IndexState(
            state=state, pending=queue.pending, files=sum(v.files for v in views),
            chunks=sum(v.chunks for v in views), message=message, error="; ".join(errors) or None,
            waiting=queue.waiting, rate=queue.rate, links_settled=queue.links_settled and state in ("ready", "indexing"),
        )

    def tell_state(self, listener: Listener) -> None:
        """Send the index state to `listener` alone (a client of the per-user daemon that just
        started: no change may come to tell it), ordered with the notifications to everyone."""
        self._reporter.tell(SafeListener(listener))

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing is queued or running (tests, benchmarks)."""
        return self._worker.wait_idle(timeout)

    # -- queries -------------------------------------------------------------------------------
    def roots(self) -> list[Root]:
        return self._registry.all()

    def locate(self, path: Path | str) -> Located:
        """The innermost root holding `path` and the root-relative path; never reads it.

        :raises OutsideRootError: when no root holds it.
        """
        return self._registry.locate(path)

    def search(self, request: SearchRequest, folders: Collection[Path] | None = None) -> SearchAnswer:
        """Search every root and merge the hits by score; a note is answered by its innermost root.

        :param folders: search only the roots at or inside these folders (one client's roots,
            when several clients share this daemon: `kbls.userdaemon`); None: every root.
        :raises QueryError: for a bad mode, limit or filter.
        :raises StoreUnavailableError: when a store vanished and is being rebuilt.
        """
        started = time.perf_counter()
        every = self._registry.all()
        roots = [root for root in every if within(root, folders)]
        limit = request.limit or (roots[0].config.search.limit if roots else DEFAULT_LIMIT)
        found: list[RootHit] = []
        for root in roots:
            nested = any(other is not root and other.folder.is_relative_to(root.folder) for other in every)
            found.extend(RootHit(root.uri, root.folder, hit) for hit in self._search_root(root, request, limit, nested))
        if len(roots) > 1:
            found.sort(key=lambda pair: -pair.hit.score)
        return SearchAnswer(found[:limit], round((time.perf_counter() - started) * 1000, 2), self.index_state())

    def _search_root(self, root: Root, request: SearchRequest, limit: int, nested: bool) -> list[Hit]:
        """`limit` hits of `root`, without the notes of roots nested inside it (they answer those)."""
        wanted = limit

        def search(engine: Engine) -> list[Hit]:
            return engine.search(
                request.query, limit=wanted, mode=request.mode, filters=request.filters,
                group_by_file=request.group_by_file, explain=request.explain,
                section_snippets=request.section_snippets,
            ).hits

        while True:
            hits = self.read(root, search)
            if not nested:
                return hits
            own = [hit for hit in hits if self._registry.owner(root.folder / hit.path) is root]
            if len(own) >= limit or len(hits) < wanted or wanted >= MAX_LIMIT:
                return own[:limit]
            wanted = min(MAX_LIMIT, wanted * 4)

    def related(self, path: Path | str, line: int | None = None, limit: int = RELATED_LIMIT) -> SearchAnswer:
        """Notes related to `path` (or its section at `line`), never the note itself.

        :raises OutsideRootError: for a path outside every root (it is not read).
        """
        started = time.perf_counter()
        found = self.locate(path)
        root = found.root
        hits = self.read(root, lambda engine: engine.related(engine.root / found.rel, line, limit=limit))
        # A candidate without a reason (no similarity, link or tag) is noise, not a relation.
        pairs = [RootHit(root.uri, root.folder, hit) for hit in hits if hit.reasons]
        return SearchAnswer(pairs, round((time.perf_counter() - started) * 1000, 2), self.index_state())

    def link_suggestions(self, path: Path | str, query: LinkQuery) -> Suggestions:
        """Notes for the link being typed in the note at `path` (`kbls.links.suggest`).

        :raises OutsideRootError: for a path outside every root.
        """
        found = self.locate(path)
        root = found.root
        return Suggestions(root.folder, self.read(root, lambda engine: engine.links.suggest(found.rel, query)))

    def resolve_links(self, path: Path | str, refs: list[LinkRef], lines: list[str]) -> Resolved:
        """Where each link of the note at `path` (whose text is `lines`) leads, inside its root.

        :raises OutsideRootError: for a path outside every root.
        """
        found = self.locate(path)
        root = found.root
        return Resolved(root.folder, self.read(root, lambda engine: engine.links.resolve(found.rel, refs, lines)))

    def in_root(self, path: Path | str, ask: Callable[[Engine, str], T]) -> InRoot[T]:
        """`ask` the engine of the root holding `path` about it (by its root-relative path): the
        entry of the note-graph and note-editing features (references, backlinks, rename, link
        diagnostics and fixes, unlinked mentions), a guarded read.

        :raises OutsideRootError: for a path outside every root.
        """
        found = self.locate(path)
        root = found.root
        return InRoot(root.uri, root.folder, self.read(root, lambda engine: ask(engine, found.rel)))

    def tags(self, prefix: str = "", limit: int = MAX_TAGS, folders: Collection[Path] | None = None) -> TagsAnswer:
        """The tags of the roots (`folders` as in `search`) starting with `prefix`, each with the
        notes carrying it, most used first (`kbls.daemon.listings`)."""
        every = self._registry.all()
        roots = [root for root in every if within(root, folders)]
        return listings.tags(roots, every, prefix, limit, self.read, self.index_state())

    def notes(self, request: NotesRequest, folders: Collection[Path] | None = None) -> NotesAnswer:
        """A page of the roots' notes, most recently modified first; `folders` as in `search`.

        :raises QueryError: for an invalid path glob.
        """
        every = self._registry.all()
        roots = [root for root in every if within(root, folders)]
        limit = request.limit or (roots[0].config.search.limit if roots else DEFAULT_LIMIT)
        return listings.notes(roots, every, request, limit, self.read, self.index_state())

    def read(self, root: Root, query: Callable[[Engine], T]) -> T:
        """Run a read of `root` on a lease of its engine; a store that vanished under it, or a root
        retired meanwhile, is a clear, retryable `BeingReopenedError`. A store replaced by a new
        file (`kbls index --rebuild`) is noticed within a second of searching and reopened; this
        answer still comes from the old file, which the lease keeps open until the read ends."""
        if self._registry.check_due(root, time.monotonic()):
            self._check_store(root)
        try:
            with READS.reading(), root.lease() as engine:
                return query(engine)
        except (QueryError, OutsideRootError, BeingReopenedError):
            raise
        except Exception as exc:
            if root.retired:  # reopened meanwhile: its store may be another file by now
                raise BeingReopenedError(f"{root.folder} is being reopened; try again in a moment") from exc
            if self._check_store(root):
                raise StoreUnavailableError(
                    f"the store of {root.folder} was deleted or replaced while kbls was running: the root is being "
                    "reopened and its store rebuilt; search again in a moment"
                ) from exc
            raise

    def status(self, folders: Collection[Path] | None = None) -> DaemonStatus:
        """The daemon's state and each root's store; `folders` as in `search`."""
        views = [v for v in self._registry.views() if within(v.root, folders)]
        refused = {r.folder: r for r in self._registry.refused_views() if within_folders(r.folder, folders)}
        reports = [
            RootReport(v.root.uri, self._root_status(v.root), joined(v.error, refused.pop(v.root.folder, None)))
            for v in views
        ]
        reports += [RootReport(r.uri, refused_status(r.folder), r.reason) for r in refused.values()]
        embedder = next((root.embedder for root in self._registry.all()), None)
        return DaemonStatus(
            version=__version__, index=self.index_state(),
            model=embedder.model_id if embedder else "", dimension=embedder.dimension if embedder else 0,
            embedded_since_start=sum(r.embedded_total for r in self._registry.all()),
            reused_since_start=sum(r.reused_total for r in self._registry.all()),
            roots=reports,
        )

    def _root_status(self, root: Root) -> RootStatus:
        try:
            with root.lease() as engine:
                return engine.status()
        except Exception as exc:  # the store vanished: say so instead of failing kb/status
            self._check_store(root)
            log.warning("cannot read the status of %s: %s", root.folder, exc)
            return RootStatus(
                root=str(root.real), store=str(root.store_dir), store_bytes=0, files=0, chunks=0, vectors=0,
                model=root.embedder.model_id, dimension=root.embedder.dimension,
                sqlite=SqliteInfo(module="", version="", vec=""), errors=[],
            )

    def _check_store(self, root: Root) -> bool:
        """Ask for a reopen if the root's store file vanished or was replaced; True if it did."""
        if not root.store_replaced():
            return False
        if self._registry.claim_replaced(root):
            message = STORE_REPLACED.format(path=root.store_path)
            log.warning("%s: %s", root.folder, message)
            self._listener.show(logging.WARNING, f"kbls: {root.folder}: {message}")
            self._worker.reopen_root(OpenRequest(root.uri, root.folder, reopen=True))
        return True


def within(root: Root, folders: Collection[Path] | None) -> bool:
    """`root` is at or inside one of `folders` (None: no restriction)."""
    return within_folders(root.folder, folders)


def within_folders(folder: Path, folders: Collection[Path] | None) -> bool:
    return folders is None or any(folder.is_relative_to(f) for f in folders)
