"""What references and rename cost on a generated workspace: 10,000 notes in 50 folders, each
linking 6 others (wiki links by title, markdown links by relative path, some with anchors), one
note linked from 200 notes and one from 500 (half by title, half by relative path). The notes
are written to disk and indexed by the indexer's parser into a real store, without chunks
(neither feature reads vectors, so no model is needed). The calls are the engine's
(`Engine.graph`, `Engine.renames`), warm, without LSP framing. Prints p50 and max, and with
--write the section of docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_backlinks.py [--notes 10000] [--write]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import date
from pathlib import Path

from kbls.engine import Engine
from kbls.hashing import content_hash
from kbls.indexing.parse import parse_note
from kbls.retrieval.backlinks import Target
from kbls.storage.records import NoteRecord
from timing import timed

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
START, END = "<!-- bench_backlinks:start -->", "<!-- bench_backlinks:end -->"
POPULAR, HUB = "d0/note-0.md", "d1/note-1.md"  # linked from 200 and from 500 notes


def path_of(i: int) -> str:
    return f"d{i % 50}/note-{i}.md"


def write_workspace(root: Path, notes: int) -> None:
    rng = random.Random(7)
    linking = {0: set(rng.sample(range(2, notes), 200)), 1: set(rng.sample(range(2, notes), 500))}
    for i in range(notes):
        targets = rng.sample(range(2, notes), 6)
        lines = [f"# Note {i}", "", f"Prose of note {i} about topic {i % 97}.", "", "## Details", ""]
        for n, t in enumerate(targets):
            if n % 3 == 2:
                rel = os.path.relpath(path_of(t), os.path.dirname(path_of(i)))
                lines.append(f"- see [note {t}]({rel}#details) for more.")
            else:
                lines.append(f"- see [[Note {t}]] and read on.")
        for k, sources in linking.items():
            if i in sources and k == 1 and i % 2:  # half the links to the hub by path: a move edits them
                lines.append(f"- the hub: [hub]({os.path.relpath(path_of(k), os.path.dirname(path_of(i)))}#details).")
            elif i in sources:
                lines.append(f"- the popular one: [[Note {k}#Details]].")
        file = root / path_of(i)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("\n".join(lines) + "\n", encoding="utf-8")


def index_spans(engine: Engine, root: Path, notes: int) -> None:
    """Each note's row, tags, links and spans as the pipeline writes them; no chunks."""
    for i in range(notes):
        rel = path_of(i)
        data = (root / rel).read_bytes()
        note = parse_note(rel, data.decode("utf-8"))
        engine.store.write_note(NoteRecord(
            path=rel, hash=content_hash(data), size=len(data), mtime_ns=1, title=note.title, kind=note.kind,
            note_type=None, aliases=note.aliases, tags=note.tags, links=note.links, chunks=[], warning=None,
            spans=note.spans,
        ), {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--write", action="store_true", help="rewrite the section of docs/benchmarks.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        write_workspace(root, args.notes)
        engine = Engine(root, store_dir=Path(tmp) / "store", load_model_on_demand=False)
        index_spans(engine, root, args.notes)
        found = len(engine.graph.references(Target(POPULAR), {}))
        edits = engine.renames.rename_title(HUB, "Renamed hub", {})
        moved = engine.renames.moves([(HUB, "elsewhere/renamed hub.md")], {})
        cases: dict[str, Callable[[], object]] = {
            f"references, note with 200 backlinks ({found} links)": lambda: engine.graph.references(Target(POPULAR), {}),
            "references, its heading (200 anchors)": lambda: engine.graph.references(Target(POPULAR, heading_line=4), {}),
            f"rename title, note linked from 500 ({sum(len(n.edits) for n in edits.notes)} edits)":
                lambda: engine.renames.rename_title(HUB, "Renamed hub", {}),
            f"willRenameFiles, that note moved ({len(moved.notes)} notes edited)":
                lambda: engine.renames.moves([(HUB, "elsewhere/renamed hub.md")], {}),
            "kb/backlinks, note with 200 backlinks": lambda: engine.graph.backlinks(POPULAR, {}),
        }
        rows = []
        for name, fn in cases.items():
            p50, worst = timed(fn, args.runs)
            rows.append((name, p50, worst))
            print(f"  {name:62} p50 {p50:7.2f} ms  max {worst:7.2f} ms")
        engine.close()
    if args.write:
        write_doc(args.notes, args.runs, rows)


def write_doc(notes: int, runs: int, rows: list[tuple[str, float, float]]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from doc_section import replace_section

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    table = "\n".join(f"| {name} | {p50:.1f} | {worst:.1f} |" for name, p50, worst in rows)
    section = (
        f"{START}\n## References and rename (issue 20)\n"
        f"`benchmarks/bench_backlinks.py --write` on {date.today()}, commit {commit}, load average {load} at\n"
        f"the end of the run (a two-core machine shared with other sessions). {notes:,} generated\n"
        f"notes in 50 folders, 6 links each (wiki by title, markdown by relative path with an anchor); one note\n"
        f"linked from 200 notes, one from 500 (half by title, which a title rename rewrites, half by relative\n"
        f"path, which a move rewrites). Engine calls, warm, {runs} runs. Targets: references on the note with 200\n"
        f"backlinks ≤ 30 ms, rename of the note linked from 500 ≤ 300 ms.\n\n"
        f"| call | p50 ms | max ms |\n|---|---|---|\n{table}\n\n"
        f"References read no note (the index's spans); rename and moves read each linking note (500 files)\n"
        f"to edit the text as it is now.\n{END}"
    )
    replace_section(DOC, START, END, section)


if __name__ == "__main__":
    main()
