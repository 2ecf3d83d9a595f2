"""Unlinked-mention precision on the shared vaults: the existing links are the truth.

For a sample of the links of a vault (a wiki link or a relative markdown link to another note),
the link is removed (its words stay, as plain text: `[[Page|words]]` and `[words](page.md)`
become `words`), the paragraph is asked for its unlinked mentions (`kbls.editing.mentions`), and
the first proposal is checked against the note the link named. Reported: how many were asked,
how often anything was proposed, the first proposal right (precision@1 = right / proposed,
hit@1 = right / asked), by kind of first proposal (name or meaning).

The meaning floor is calibrated apart: the same paragraphs with the link's words removed too
(nothing names the note any more), and the nearest note by meaning proposed when its cosine
reaches the floor; precision@1 and how often something is proposed are given at several floors.
`mentions.MEANING_FLOOR` was chosen on pkm and is checked on rust-by-example.

    .venv/bin/python benchmarks/eval_mentions.py [--sets pkm rust-by-example] [--sample 300]

Writes its figures into `docs/benchmarks.md` between `<!-- mentions:start -->` and `<!-- mentions:end -->`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_section import replace_section  # noqa: E402

CACHE = REPO / "benchmarks" / ".cache" / "mentions"
DOC = REPO / "docs" / "benchmarks.md"
START, END = "<!-- mentions:start -->", "<!-- mentions:end -->"
FLOORS = (0.35, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)


def _eval_dir() -> Path:
    for base in (REPO.parent / "shared" / "eval", Path("/work/shared/eval")):
        if base.exists():
            return base
    raise SystemExit("the shared eval sets are missing (../shared/eval)")


def workspace(name: str) -> Path:
    root = CACHE / name / "src"
    if not root.exists():
        (CACHE / name).mkdir(parents=True, exist_ok=True)
        with tarfile.open(_eval_dir() / f"{name}-src.tgz") as archive:
            archive.extractall(CACHE / name, filter="data")
        (root / ".kbls.yaml").write_text(f"store: ../../{name}-store\n")
    return root


def evaluate(name: str, sample: int) -> dict[str, Any]:
    from kbls.editing.mentions import mentions, paragraph_at
    from kbls.engine import Engine
    from kbls.links.suggest import LinkQuery
    from kbls.links.syntax import LinkKind, links_in

    root = workspace(name)
    engine = Engine(root)
    engine.index()
    links = engine.links
    catalogue = links.catalogue()
    cases = []
    for note in catalogue.notes:
        lines = links.resolver.read_lines(note.path, 2_000_000) or []
        for ref in links_in(lines):
            if not ref.target:
                continue
            targets = links.resolver.resolve(catalogue, note.path, ref, lines)
            if len(targets) != 1 or targets[0].path == note.path or targets[0].path not in catalogue.by_path:
                continue
            if paragraph_at(lines, ref.line) is None:
                continue
            cases.append((note.path, lines, ref, targets[0].path))
    random.Random(7).shuffle(cases)
    cases = cases[:sample]
    asked = proposed = right = 0
    by_kind: dict[str, list[int]] = {"title": [0, 0], "alias": [0, 0], "meaning": [0, 0]}
    nearest: list[tuple[float, bool]] = []
    for source, lines, ref, target in cases:
        written = lines[ref.line][ref.start : ref.end]
        words = _words(written, ref.kind == LinkKind.WIKI, ref.target)
        kept = [*lines]
        kept[ref.line] = lines[ref.line][: ref.start] + words + lines[ref.line][ref.end :]
        asked += 1
        found = mentions(links, source, kept, ref.line)
        if found:
            proposed += 1
            hit = found[0].path == target
            right += hit
            by_kind[found[0].how][0] += 1
            by_kind[found[0].how][1] += hit
        # the floor: the words gone too, only meaning can find the note
        bare = [*lines]
        bare[ref.line] = lines[ref.line][: ref.start] + lines[ref.line][ref.end :]
        span = paragraph_at(bare, ref.line)
        if span is None:
            continue
        context = " ".join(bare[n].strip() for n in range(span[0], span[1] + 1))
        query = LinkQuery(kind=LinkKind.WIKI, typed="", context=context, document=bare, limit=5)
        near = [s for s in links.suggest(source, query) if s.meaning is not None]
        if near:
            nearest.append((near[0].meaning or 0.0, near[0].path == target))
    engine.close()
    floors = {}
    for floor in FLOORS:
        over = [hit for score, hit in nearest if score >= floor]
        precision = round(sum(over) / len(over), 3) if over else None
        floors[floor] = {"proposed": len(over), "right": sum(over), "precision": precision}
    return {
        "notes": len(catalogue.notes), "links": len(cases), "asked": asked, "proposed": proposed, "right": right,
        "precision": round(right / proposed, 3) if proposed else None, "hit": round(right / asked, 3) if asked else None,
        "by_kind": by_kind, "meaning_cases": len(nearest), "floors": floors,
    }


def _words(written: str, wiki: bool, target: str) -> str:
    """A link's words as plain text: its label, else the wiki name (without `#heading`)."""
    if wiki:
        inner = written[2:-2]
        name, _, label = inner.partition("|")
        return label or name.split("#", 1)[0]
    return written[1 : written.index("](")]


def write_doc(results: dict[str, dict[str, Any]]) -> None:
    from kbls.editing.mentions import MEANING_FLOOR

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO).stdout.strip()
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [START, " ".join([
        f"Written by `benchmarks/eval_mentions.py`, {now}, commit {commit}, load average {os.getloadavg()[0]:.1f}.",
        "A link of the vault is removed (its words stay as text), the paragraph is asked for its unlinked",
        "mentions, and the first proposal is checked against the note the link named. precision@1 = right /",
        "proposed, hit@1 = right / asked; by the kind of the first proposal.",
    ]), "", "| set | notes | links asked | proposed | right | precision@1 | hit@1 | first by title (right) | alias | meaning |",
        "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        k = r["by_kind"]
        lines.append(
            f"| {name} | {r['notes']} | {r['asked']} | {r['proposed']} | {r['right']} | {r['precision']} | {r['hit']} | "
            f"{k['title'][0]} ({k['title'][1]}) | {k['alias'][0]} ({k['alias'][1]}) | {k['meaning'][0]} ({k['meaning'][1]}) |"
        )
    lines += ["", " ".join([
        "Meaning alone (the link's words removed too, so no name is left): the nearest note proposed when its",
        f"cosine reaches the floor; the floor in use is {MEANING_FLOOR} (chosen on pkm, checked on the other set).",
    ]), "", "| set | floor | proposed | right | precision@1 |", "|---|---|---|---|---|"]
    for name, r in results.items():
        for floor, f in r["floors"].items():
            lines.append(f"| {name} | {floor} | {f['proposed']} of {r['meaning_cases']} | {f['right']} | {f['precision']} |")
    lines += ["", END]
    replace_section(DOC, START, END, "\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["pkm", "rust-by-example"])
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--no-doc", action="store_true")
    args = parser.parse_args()
    results = {name: evaluate(name, args.sample) for name in args.sets}
    for name, r in results.items():
        print(name, r)
    if not args.no_doc:
        write_doc(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
