"""Hold a search inside the engine: a thread of a given name stops in `HybridSearcher.search`
until released, so a test can reopen or replace the root under it deterministically; every
`Engine.close` is recorded (which engine, in order)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from kbls.engine import Engine
from kbls.retrieval.hybrid import HybridSearcher


@dataclass
class Held:
    thread_name: str
    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    #: the engines closed, in order (their `root`'s store folder and identity).
    closed: list[Engine] = field(default_factory=list)
    #: engines whose store was still being searched by the held thread when they were closed.
    closed_under_search: list[Engine] = field(default_factory=list)


@contextmanager
def held_search(monkeypatch: pytest.MonkeyPatch, thread_name: str) -> Iterator[Held]:
    held = Held(thread_name)
    search, close = HybridSearcher.search, Engine.close
    searching: dict[int, int] = {}  # id(store) -> searches inside it

    def holding(self: HybridSearcher, *args: Any, **kwargs: Any) -> Any:
        key = id(self.store)
        searching[key] = searching.get(key, 0) + 1
        try:
            if threading.current_thread().name == held.thread_name:
                held.entered.set()
                assert held.release.wait(60), "the held search was never released"
            return search(self, *args, **kwargs)
        finally:
            searching[key] -= 1

    def recording(self: Engine) -> None:
        held.closed.append(self)
        if searching.get(id(self.store), 0):
            held.closed_under_search.append(self)
        close(self)

    monkeypatch.setattr(HybridSearcher, "search", holding)
    monkeypatch.setattr(Engine, "close", recording)
    try:
        yield held
    finally:
        held.release.set()
