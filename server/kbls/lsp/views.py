"""The parsed view of each open document's current version, shared by every notes feature.

A request of any notes feature (diagnostics, document links, definition, hover, code actions,
references, rename, code lens, the outline) reads an open document through `view_of`: the
`NoteView` (`kbls.links.view`) of the document's text as pygls holds it now, made on first use
after each change and kept until the next change or didClose, so a text is parsed once however
many features ask. The symbols of the outline (`documentSymbol`: the view's headings, read by
the line scan every link feature shares, and the front matter) are kept beside it, made on the
first request. The folds need the CommonMark block parse (~25 µs a line: where a list or a quote
ends), kept too and made on a thread of its own, once per version: for a client that asks for
folds, as soon as the version's links are checked, so `foldingRange` finds it made. A feature's
answer the client asked for once (`answer`: the outline's symbols) is made then too: an editor
asks again after every change (VS Code's outline and breadcrumbs), and finds it made (before the
diagnostics are sent: an editor may ask as soon as it has them).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from pygls.workspace import TextDocument

from kbls.editing.outline import Outline, Symbols, outline, symbols
from kbls.links.view import NoteView
from kbls.lsp.featurestate import state_of

if TYPE_CHECKING:
    from kbls.lsp.server import KblsServer

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Kept:
    #: the text the view was made from (pygls makes a new string for each change).
    source: str
    view: NoteView
    outline: asyncio.Future[Outline] | None = field(default=None)
    symbols: Symbols | None = field(default=None)
    #: a feature's answer for this text, by the feature's name (`Views.answer`).
    answers: dict[str, object] = field(default_factory=dict)


class Views:
    """The view of each open document's latest text, by URI; dropped at didClose."""

    def __init__(self, ls: KblsServer) -> None:
        self._lock = threading.Lock()  # guards _kept: the event loop and the query threads read it
        self._kept: dict[str, _Kept] = {}
        self._outline_pool = ThreadPoolExecutor(1, thread_name_prefix="kbls-outline")
        #: the client asked for folds (VS Code's client drops kbls's: none parsed for it).
        self.outlines_asked = False
        #: how to make each answer the client asked for once, by name: made ahead (`warm_answers`)
        self._asked: dict[str, Callable[[TextDocument], object]] = {}

    def _entry(self, document: TextDocument) -> _Kept:
        source = document.source
        with self._lock:
            kept = self._kept.get(document.uri)
            if kept is None or kept.source is not source:
                previous = kept.view if kept is not None else None
                kept = self._kept[document.uri] = _Kept(source, NoteView(document.lines, previous))
            return kept

    def view(self, document: TextDocument) -> NoteView:
        return self._entry(document).view

    def symbols(self, document: TextDocument) -> Symbols:
        """The headings and front matter of the document's text, read once (no block parse)."""
        kept = self._entry(document)
        if kept.symbols is None:  # read outside the lock (a scan of the lines); a race reads it twice
            kept.symbols = symbols(kept.view.lines, kept.view.headings)
        return kept.symbols

    def answer(self, document: TextDocument, name: str, make: Callable[[TextDocument], T]) -> T:
        """What `make` answers for the document's text, made once per text (`name` tells the
        answers of one text apart; on the event loop's thread only). From now on it is made
        ahead for each new version (`warm_answers`)."""
        self._asked[name] = make
        kept = self._entry(document)
        if name not in kept.answers:
            kept.answers[name] = make(document)
        found: T = kept.answers[name]  # type: ignore[assignment]  # made by `make` for this name
        return found

    def outline(self, document: TextDocument) -> asyncio.Future[Outline]:
        """The outline and folds of the document's text, parsed once (on the event loop's thread only)."""
        self.outlines_asked = True
        return self._outline(document)

    def warm_answers(self, document: TextDocument) -> None:
        """Make, for a new version, the answers the client ever asked for (a few ms), ahead of its
        request (on the event loop's thread only)."""
        kept = self._entry(document)
        for name, make in list(self._asked.items()):
            if name not in kept.answers:
                try:
                    kept.answers[name] = make(document)
                except Exception:  # made again, and failing where it is seen, when the client asks
                    log.exception("making %s ahead for %s failed", name, document.uri)

    def warm_outline(self, document: TextDocument) -> None:
        """Parse the outline of a new version ahead of the client's request, if it ever asked for one
        (after its links were checked: the two parses would share the cores)."""
        if self.outlines_asked:
            self._outline(document)

    def _outline(self, document: TextDocument) -> asyncio.Future[Outline]:
        kept = self._entry(document)
        made = self.symbols(document)
        with self._lock:
            if kept.outline is None:
                kept.outline = asyncio.wrap_future(self._outline_pool.submit(outline, kept.view.lines, made))
            return kept.outline

    def forget(self, uri: str) -> None:
        with self._lock:
            self._kept.pop(uri, None)


def view_of(ls: KblsServer, document: TextDocument) -> NoteView:
    """The parsed view of `document`'s text now."""
    return state_of(ls, Views).view(document)


def forget(ls: KblsServer, uri: str) -> None:
    """The document was closed (`kbls.lsp.textsync`)."""
    state_of(ls, Views).forget(uri)
