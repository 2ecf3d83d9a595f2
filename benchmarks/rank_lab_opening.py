"""Ranking lab, embedded text: a copy of a lab set re-indexed with a chunk's opening words
(`indexing.chunk.OPENING_TOKENS`, decision 7 of docs/adr/0003-ranking.md) set to another length,
to measure that indexing choice on all four shared sets. Only the chunks whose embedded text
changes are embedded again (a note's first chunk keeps its vector).

Usage: nice -n 19 .venv/bin/python benchmarks/rank_lab_opening.py SET [--tokens 0] [--lab DIR]
(writes DIR/SET-noopen for 0 tokens, DIR/SET-open<N> otherwise; then `rank_lab.py --sets
SET-noopen`).
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import time
from pathlib import Path

from kbls.indexing import chunk

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set")
    parser.add_argument("--tokens", type=int, default=0)
    parser.add_argument("--lab", type=Path, default=REPO / ".cache" / "lab")
    args = parser.parse_args()
    source = args.lab / args.set
    target = args.lab / (f"{args.set}-noopen" if args.tokens == 0 else f"{args.set}-open{args.tokens}")
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target)
    db = sqlite3.connect(target / "store" / "kbls.sqlite3")
    # The copy is its own root, and its chunking fingerprint is made stale so that the next
    # scan re-chunks every note (the fingerprint does not hash OPENING_TOKENS).
    db.execute("UPDATE meta SET value = ? WHERE key = 'root'", (str((target / "src").resolve()),))
    db.execute("UPDATE meta SET value = '0:lab' WHERE key = 'chunking'")
    db.commit()
    db.close()
    chunk.OPENING_TOKENS = args.tokens
    from kbls.engine import Engine

    started = time.perf_counter()
    engine = Engine(target / "src", store_dir=target / "store")
    report = engine.index()
    engine.close()
    print(f"{target}: {report.embedded} embedded, {report.reused} reused, {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
