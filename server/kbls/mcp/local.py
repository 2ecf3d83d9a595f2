"""`LocalBackend`: the MCP tools served from the roots' stores, opened in this process.

It never indexes and never creates a store: a root whose store file does not exist yet is
reported with "run `kbls index`", and a store that exists is opened read-only (`Engine(read_only=
True)`: SQLite `mode=ro`; an old schema or a damaged store is an error for the user to fix with
`kbls index`, not repaired here). Engines are opened on first use and kept; roots with the same
model share one loaded model. The store of an editor's daemon may change meanwhile: the engine
reads committed changes, and a store file deleted or replaced since (`kbls index --rebuild`, a
daemon rebuilding a damaged store) is noticed at the next call and opened anew.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from kbls.config import Config, load_config, resolve_store
from kbls.engine import Engine
from kbls.errors import KblsError, OutsideRootError, QueryError
from kbls.indexing.embed import Embedder
from kbls.indexing.scan import LEFT_OUT_TARGET
from kbls.lease import Leased
from kbls.limits import Mode
from kbls.mcp.backend import NotesBackend, NoteText, NotIndexedError, RootState
from kbls.mcp.notes import locate, read_lines
from kbls.query.filters import Filters
from kbls.results import Hit
from kbls.storage.postgres.location import PgLocation
from kbls.storage.store import STORE_FILE


def index_hint(root: Path) -> str:
    return f"{root} has no kbls index yet: run `kbls index --root {root}` (or open it in an editor with kbls)"


class LocalBackend(NotesBackend):
    """Read-only engines of the roots asked about (see the module docstring)."""

    def __init__(self, store_dirs: dict[Path, Path | str] | None = None) -> None:
        #: an explicit store per root (`kbls mcp --root R --store S`: a folder or a team store's
        #: URL); others use the config.
        self.store_dirs = {root.resolve(): store for root, store in (store_dirs or {}).items()}
        self._engines: dict[Path, Leased[Engine]] = {}
        self._embedders: dict[str, Embedder] = {}
        self._lock = threading.Lock()

    # -- opening -----------------------------------------------------------------------------
    def _store_dir(self, root: Path, config: Config) -> Path | PgLocation:
        return resolve_store(root, config, self.store_dirs.get(root))

    @contextlib.contextmanager
    def _engine(self, root: Path) -> Iterator[Engine]:
        """A lease of the open engine of `root` (`kbls.lease`): an engine replaced meanwhile by
        another call is closed when the last call on it ends, never under it.

        :raises NotIndexedError: when its store does not exist.
        """
        root = root.resolve()
        with contextlib.ExitStack() as stack:
            with self._lock:  # leased under the lock: no other call can retire it first
                engine = stack.enter_context(self._current(root).lease())
            yield engine

    def _current(self, root: Path) -> Leased[Engine]:
        """The engine of `root`, opened anew if its store was replaced (the old one retired)."""
        held = self._engines.get(root)
        if held is not None:
            with held.lease() as engine:
                current = not engine.store.replaced()
            if current:
                return held
            del self._engines[root]  # deleted or rebuilt since: it would read the old file forever
            held.retire()
        held = self._engines[root] = Leased(self._open(root), _close, str(root))
        return held

    def _open(self, root: Path) -> Engine:
        config, _ = load_config(root, store_given=root in self.store_dirs)
        store_dir = self._store_dir(root, config)
        if isinstance(store_dir, Path) and not (store_dir / STORE_FILE).is_file():
            raise NotIndexedError(index_hint(root))
        embedder = self._embedders.get(config.model.name)
        if embedder is None:
            embedder = self._embedders[config.model.name] = Embedder(config.model)
        explicit = self.store_dirs.get(root) if isinstance(store_dir, PgLocation) else store_dir
        return Engine(root, config=config, store_dir=explicit, embedder=embedder, read_only=True)

    def _indexed(self, roots: Sequence[Path], leases: contextlib.ExitStack) -> tuple[list[Engine], list[str]]:
        """The engines of the indexed `roots`, leased until `leases` closes, and notes on the others."""
        engines: list[Engine] = []
        notes: list[str] = []
        for root in roots:
            try:
                engines.append(leases.enter_context(self._engine(root)))
            except NotIndexedError as exc:
                notes.append(str(exc))
            except KblsError as exc:  # a broken .kbls.yaml or store costs that root, not the others
                notes.append(f"{root}: {exc}")
        if not engines:
            raise NotIndexedError("; ".join(notes) if notes else "there is no root to search")
        return engines, notes

    # -- the four calls ----------------------------------------------------------------------
    def search(
        self, roots: Sequence[Path], query: str, *, limit: int, mode: Mode, filters: Filters
    ) -> tuple[list[Hit], list[str]]:
        hits: list[Hit] = []
        with contextlib.ExitStack() as leases:
            engines, notes = self._indexed(roots, leases)
            for engine in engines:
                result = engine.search(query, limit=limit, mode=mode, filters=filters)
                if result.mode != mode:
                    notes.append(f"{engine.root}: searched {result.mode.value} (the model is not loaded)")
                hits.extend(result.hits)
        hits.sort(key=lambda hit: -hit.score)  # stable: each root's own order is kept on ties
        return hits[:limit], notes

    def related(self, roots: Sequence[Path], path: str, *, line: int | None, limit: int) -> list[Hit]:
        root, rel = locate(roots, path)
        with self._engine(root) as engine:
            if engine.store.file_info(rel) is None:
                raise QueryError(f"{rel} is not in the index of {root}; search for it first to get an indexed path")
            return engine.related(engine.root / rel, line, limit=limit)

    def read_note(
        self, roots: Sequence[Path], path: str, *, start_line: int | None, end_line: int | None
    ) -> NoteText:
        root, rel = locate(roots, path)
        with self._engine(root) as engine:
            scanner, real, config = engine.scanner, engine.root, engine.config
        if not scanner.wanted(rel):
            raise OutsideRootError(f"{rel} is not a note of {root} (the index's include/exclude rules leave it out)")
        file = real / rel
        found = scanner.candidate(rel)
        if found is None or not file.is_file():
            raise QueryError(f"{rel} does not exist in {root}")
        if found.problem == LEFT_OUT_TARGET:
            raise OutsideRootError(f"{rel} is not a note of {root}: it is a {found.problem}")
        cap, max_bytes = config.size_cap(rel)
        try:
            lines, first, last, total, truncated = read_lines(file, start_line, end_line, max_bytes, cap, root=real)
        except OSError as exc:
            raise QueryError(f"cannot read {rel}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise QueryError(f"{rel}: {exc}") from None
        return NoteText(
            root=str(real), path=rel, start_line=first, end_line=last, total_lines=total,
            text="\n".join(lines), truncated=truncated,
        )

    def status(self, roots: Sequence[Path]) -> list[RootState]:
        states: list[RootState] = []
        for root in roots:
            try:
                with self._engine(root) as engine:
                    states.append(RootState(root=str(root.resolve()), indexed=True, status=engine.status()))
            except NotIndexedError as exc:
                states.append(RootState(root=str(root.resolve()), indexed=False, message=str(exc)))
            except KblsError as exc:
                states.append(RootState(root=str(root.resolve()), indexed=False, message=f"cannot open: {exc}"))
        return states

    def close(self) -> None:
        with self._lock:
            for held in self._engines.values():
                held.retire()
            self._engines.clear()


def _close(engine: Engine) -> None:
    engine.close()
