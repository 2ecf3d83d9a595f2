"""Workspaces for the tests: the fixture notes, note writers and generated corpora with their sizes.

Two generators with different jobs: `write_notes` writes notes whose paragraphs are all
distinct prose (concurrency tests that search for text), `make_corpus` writes small notes in ten
folders, each section ending in a unique marker word `unique{i}x{s}v{version}` (fault and load
tests that count files and chunks). `KBLS_LONG=1` scales the fault tests up to the sizes of
issue 6 (see `sized`).
"""

from __future__ import annotations

import os
import random
import shutil
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: the small knowledge base every suite searches (rust/, cooking/, travel/, ...)
FIXTURES = REPO / "tests" / "fixtures" / "notes"


def long_run() -> bool:
    return os.environ.get("KBLS_LONG", "") not in ("", "0")


def sized(short: int, long: int) -> int:
    """`short` in `make test`, `long` with KBLS_LONG=1."""
    return long if long_run() else short


def store_of(root: Path) -> Path:
    """Where `write_config` puts a root's store by default: `<root>-kbls` beside the root (a store
    inside the root is a config error)."""
    real = root.resolve()
    return real.parent / f"{real.name}-kbls"


def write_config(root: Path, store: str | Path | None = None, extra: str = "") -> Path:
    """`.kbls.yaml` in `root` naming its store, plus `extra` (dedented) settings; returns the store
    folder. The default store is `store_of(root)`, written relative (`../<root>-kbls`) as a user
    would."""
    setting = f"../{root.resolve().name}-kbls" if store is None else str(store)
    (root / ".kbls.yaml").write_text(f"store: {setting}\n" + textwrap.dedent(extra), encoding="utf-8")
    return store_of(root) if store is None else (root / store).resolve()


def make_workspace(tmp_path: Path, name: str = "notes") -> Path:
    """A copy of the fixture notes under `tmp_path`, its store beside the copy (`store_of`)."""
    root = tmp_path / name
    shutil.copytree(FIXTURES, root)
    write_config(root)
    return root


def write(root: Path, rel: str, text: str) -> Path:
    """Write a note (dedented) under `root`, creating folders."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


# -- distinct prose ------------------------------------------------------------------------------
_NOUNS = [
    "river", "mountain", "garden", "harbour", "lantern", "orchard", "violin", "compass", "meadow", "glacier",
    "archive", "kettle", "falcon", "bakery", "engine", "ladder", "marble", "pepper", "quartz", "saddle",
    "tunnel", "velvet", "walnut", "yacht", "anchor", "beacon", "canyon", "dolphin", "ember", "fossil",
    "granite", "hazel", "island", "jasmine", "kayak", "lemon", "maple", "nectar", "olive", "pebble", "quill",
    "raven", "spruce", "thistle", "umbrella", "valley", "willow", "timber", "zephyr", "acorn", "bramble",
    "cedar", "dune", "estuary", "fern", "grove", "heron", "ivy", "juniper", "kelp", "lichen", "moss",
    "nettle", "oak", "prairie", "reed", "sorrel", "tide", "upland", "vine", "wheat", "yarrow", "alder",
    "birch", "clover", "daisy", "elm", "flax", "gorse", "heather", "iris",
]
_VERBS = ["gathers", "measures", "repairs", "follows", "paints", "carries", "studies", "records", "sorts", "builds"]


def sentence(rng: random.Random, words: int = 12) -> str:
    picked = [rng.choice(_NOUNS) for _ in range(words)]
    picked.insert(1, rng.choice(_VERBS))
    return " ".join(picked).capitalize() + "."


def write_notes(root: Path, count: int, *, sections: int = 2, seed: int = 7, folder: str = "gen") -> list[Path]:
    """`count` markdown notes of `sections` sections each, every paragraph distinct."""
    rng = random.Random(seed)
    written = []
    for i in range(count):
        lines = [f"# Note {i} about the {rng.choice(_NOUNS)}", ""]
        for s in range(sections):
            lines += [f"## Part {s} on {rng.choice(_NOUNS)}", "", " ".join(sentence(rng) for _ in range(8)), ""]
        path = root / folder / f"note-{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")
        written.append(path)
    return written


# -- counted notes with unique markers -----------------------------------------------------------
#: words the fault and load tests search for ("garden tomato", "ownership borrow lifetime", ...)
WORDS = [
    "alpha", "beta", "gamma", "delta", "ownership", "borrow", "lifetime", "kernel", "socket", "garden",
    "tomato", "basil", "recipe", "travel", "train", "museum", "rust", "python", "memory", "cache", "index",
    "vector", "search", "note", "meeting", "budget", "plan", "river", "mountain", "coffee", "bread", "flour",
    "yeast", "oven",
]


def note_text(i: int, rng: random.Random, version: int = 0) -> str:
    """Note `i`: 1-3 sections of 20-60 words of `WORDS`, each ending `unique{i}x{s}v{version}`."""
    parts = [f"# Note {i}\n"]
    for s in range(rng.randint(1, 3)):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60)))
        parts.append(f"## Section {s}\n\n{words} unique{i}x{s}v{version}.\n")
    return "\n".join(parts)


def make_corpus(root: Path, count: int, seed: int = 0) -> list[Path]:
    """`count` small markdown notes (1-3 sections each) in ten folders."""
    rng = random.Random(seed)
    paths = []
    for i in range(count):
        path = root / f"d{i % 10}" / f"note-{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(i, rng), encoding="utf-8")
        paths.append(path)
    return paths
