"""`kbls` with every embedded chunk logged: `python tests/support/counting_cli.py index --root ...`.

The crash tests SIGKILL the process, so they cannot ask it what it embedded. Here
`Embedder.embed_passages` is wrapped to append the hash of each text it is given to the file
named by `KBLS_EMBED_LOG` (one O_APPEND write per batch, before the model runs), so every
embedding the process started is on disk even when it dies right after.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import numpy as np

from kbls import cli
from kbls.indexing.chunk import text_hash
from kbls.indexing.embed import Embedder

_original = Embedder.embed_passages


def _logged(self: Embedder, texts: Sequence[str]) -> np.ndarray:
    log = os.environ.get("KBLS_EMBED_LOG")
    if log and texts:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, "".join(text_hash(t) + "\n" for t in texts).encode())
        finally:
            os.close(fd)
    return _original(self, texts)


Embedder.embed_passages = _logged  # type: ignore[method-assign]  # the wrap is this script's job

if __name__ == "__main__":
    sys.exit(cli.main(sys.argv[1:]))
