"""Ranking lab, lexical fields: a copy of a lab store whose FTS rows also hold each note's front
matter `description:` (in the `terms` column, weight 1, which coverage reads too), to measure
whether the description is worth indexing before the indexer is changed. Nothing is re-embedded:
only the lexical signal moves.

Usage: nice -n 19 .venv/bin/python benchmarks/rank_lab_fields.py --lab .cache/lab SET [--every]
(writes .cache/lab/SET-desc, or SET-desc-all with --every: the description in every chunk of the
note, as its title is, instead of its first chunk only; then `rank_lab.py --sets SET-desc`).
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def description(path: Path) -> str | None:
    """The note's front matter `description:` as text, or None."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---", 4)
    if end < 0:
        return None
    try:
        meta = yaml.safe_load(text[4:end])
    except yaml.YAMLError:
        return None
    found = meta.get("description") if isinstance(meta, dict) else None
    return str(found).strip() if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set")
    parser.add_argument("--lab", type=Path, default=REPO / ".cache" / "lab")
    parser.add_argument("--every", action="store_true")
    args = parser.parse_args()
    source = args.lab / args.set
    target = args.lab / f"{args.set}-desc{'-all' if args.every else ''}"
    if target.exists():
        shutil.rmtree(target)
    (target / "store").mkdir(parents=True)
    (target / "src").symlink_to((source / "src").resolve())
    db = sqlite3.connect(source / "store" / "kbls.sqlite3")
    db.execute("VACUUM INTO ?", (str(target / "store" / "kbls.sqlite3"),))
    db.close()
    db = sqlite3.connect(target / "store" / "kbls.sqlite3")
    db.execute("UPDATE meta SET value = ? WHERE key = 'root'", (str((source / "src").resolve()),))
    files = db.execute("SELECT id, path FROM files").fetchall()
    changed = 0
    for file_id, path in files:
        found = description(source / "src" / path)
        if not found:
            continue
        order = "" if args.every else "AND ord = (SELECT min(ord) FROM chunks WHERE file_id = :f)"
        ids = [r[0] for r in db.execute(f"SELECT id FROM chunks WHERE file_id = :f {order}", {"f": file_id})]
        for rowid in ids:
            db.execute("UPDATE chunks_fts SET terms = terms || ' ' || ? WHERE rowid = ?", (found, rowid))
        changed += 1
    db.commit()
    print(f"{target}: {changed} notes' descriptions indexed")


if __name__ == "__main__":
    main()
