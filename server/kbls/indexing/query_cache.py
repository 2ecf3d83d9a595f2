"""Recent query vectors, so a repeated query is not embedded again.

Search-as-you-type and several clients of one daemon repeat queries (the same prefix typed
again, the same search from an editor and an agent). Embedding a query is most of a search's
CPU (about 16 of 30 ms on the shared 2-core machine, docs/benchmarks.md, Load); a hit here is a
dictionary lookup. The vectors are read-only arrays, so a caller cannot change a cached one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

#: queries kept per model: 1,024 x 384 floats = 1.5 MB
QUERY_CACHE_SIZE = 1024


class QueryCache:
    """A thread-safe LRU of query text -> unit vector."""

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self.size = size
        # Guards _vectors, hits and misses (the search and query threads embed queries at once).
        self._lock = threading.Lock()
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, text: str, embed: Callable[[str], np.ndarray]) -> np.ndarray:
        """The vector of `text`, embedded by `embed` (outside the lock) on a miss."""
        with self._lock:
            vector = self._vectors.get(text)
            if vector is not None:
                self._vectors.move_to_end(text)
                self.hits += 1
                return vector
            self.misses += 1
        vector = np.asarray(embed(text))
        vector.setflags(write=False)
        with self._lock:
            self._vectors[text] = vector
            self._vectors.move_to_end(text)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return vector
