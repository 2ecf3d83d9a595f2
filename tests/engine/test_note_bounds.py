"""Pathological notes stay within bounded memory (issue 14) and the bounds do not change results.

The markdown parser reads a long note in windows; splitting must not change the structure. The
caps on markdown lines and sections are documented in docs/configuration.md ("Limits"); beyond
them the note is still indexed, as text, with a warning. The chunker never hands the tokenizer a
huge batch or a huge text at once.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from kbls.config import ChunkConfig
from kbls.indexing import markdown, parse
from kbls.indexing.chunk import COUNT_SLICE, LONG_LINE_WINDOW, Chunker
from kbls.indexing.embed import Embedder
from kbls.indexing.markdown import parse_markdown
from kbls.indexing.parse import parse_note

SPEC = json.loads((Path(__file__).parent.parent / "fixtures" / "commonmark" / "spec-blocks.json").read_text("utf-8"))
PIECES = [e["markdown"] for e in SPEC["examples"]] + [
    "# Title\n", "para one\npara two\n", "- a\n- b\n\n  more b\n", "```\n# code\n```python\n# code\n```\n",
    "Setext\nover lines\n===\n", "> quote\nlazy\n", "[ref]: /url\n", "1. x\n2. y\n", "\n\n", "    indented\n",
]


def _document(seed: int, size: int = 60) -> list[str]:
    rng = random.Random(seed)
    return "".join(rng.choice(PIECES) for _ in range(size)).split("\n")


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("window", [2, 3, 7])
def test_parsing_in_windows_gives_the_structure_of_one_pass(seed: int, window: int, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _document(seed)
    whole = parse_markdown(lines, front_matter=False)
    monkeypatch.setattr(markdown, "WINDOW_LINES", window)
    windowed = parse_markdown(lines, front_matter=False)
    assert windowed.blocks == whole.blocks
    assert windowed.code_lines == whole.code_lines


def test_a_window_full_of_one_costly_block_is_cut_and_no_line_is_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(markdown, "WINDOW_LINES", 10)
    monkeypatch.setattr(markdown, "MAX_WINDOW_TOKENS", 50)
    lines = ["> - a"] * 200  # one block quote: no top-level block boundary to restart at
    structure = parse_markdown(lines, front_matter=False)
    kept = {n for b in structure.blocks for n in range(b.start, b.end + 1)}
    assert kept == set(range(200))


def test_a_huge_fence_is_still_one_code_block(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(markdown, "WINDOW_LINES", 10)
    lines = ["```", *(["# not a heading"] * 500), "```", "# Heading", ""]
    structure = parse_markdown(lines, front_matter=False)
    first = structure.blocks[0]
    assert (first.start, first.end, first.is_code) == (0, 501, True)
    assert [b.heading_text for b in structure.blocks if b.heading_level] == ["Heading"]


def test_beyond_the_markdown_line_cap_the_rest_is_plain_paragraphs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse, "MAX_MARKDOWN_LINES", 7)
    text = "# T\n\npara #tag\n\n## A\n\ntext\n\n## B\n\nlate #late [[late]]\n"
    note = parse_note("n.md", text)
    # Parsing stops at the last block boundary within the cap: line 7 ("text") may go on.
    assert note.warning is not None and "longer than 7 lines" in note.warning and "line 7 on" in note.warning
    assert [s.headings for s in note.sections] == [[], ["A"]]
    body = [(b.start_line, b.text) for s in note.sections for b in s.blocks]
    assert body[-3:] == [(6, "text"), (8, "## B"), (10, "late #late [[late]]")]  # kept, as plain text
    assert note.tags == ["tag"] and note.links == []


def test_beyond_the_section_cap_headings_are_text_of_the_last_section(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse, "MAX_SECTIONS", 3)
    text = "".join(f"## h{i}\n\nbody {i}\n\n" for i in range(6))
    note = parse_note("n.md", text)
    assert [s.headings for s in note.sections] == [["h0"], ["h1"]]
    assert note.warning is not None and "more than 3 headings" in note.warning and "line 9" in note.warning
    last = [b.text for b in note.sections[-1].blocks]
    assert last[-4:] == ["## h4", "body 4", "## h5", "body 5"]
    assert not any(b.is_heading for b in note.sections[-1].blocks[1:])


class _Watching:
    """A token counter that records the largest batch and text it was handed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.max_tokens = inner.max_tokens
        self.passage_prefix = inner.passage_prefix
        self.largest_batch = 0
        self.longest_text = 0

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        self.largest_batch = max(self.largest_batch, len(texts))
        self.longest_text = max([self.longest_text, *map(len, texts)])
        return self.inner.count_tokens(texts)

    def split_by_tokens(self, text: str, budget: int) -> list[tuple[int, int]]:
        self.longest_text = max(self.longest_text, len(text))
        return self.inner.split_by_tokens(text, budget)


@pytest.mark.parametrize(
    "text",
    [
        "- item\n" * 20_000,  # many tiny blocks
        "word " * 200_000,  # one 1 MB line
        "a few words on a line\n" * 40_000,  # one 880 KB paragraph
    ],
    ids=["list", "line", "paragraph"],
)
def test_the_chunker_never_tokenizes_a_huge_batch_or_text(text: str, tokenizer_only: Embedder) -> None:
    counter = _Watching(tokenizer_only)
    chunks = Chunker(counter, ChunkConfig(overlap_tokens=0)).chunk(parse_note("big.md", text))
    assert chunks and all(c.tokens <= tokenizer_only.max_tokens for c in chunks)
    assert counter.largest_batch <= COUNT_SLICE
    assert counter.longest_text <= max(LONG_LINE_WINDOW, 256 * 64 + len(counter.passage_prefix) + 2000)
    # Nothing lost, nothing repeated (no overlap configured).
    assert "".join(c.body for c in chunks).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(" ", "")


# VmHWM, not ru_maxrss: Linux carries ru_maxrss across fork + exec, so a child of a pytest that
# has loaded the model would report the parent's peak (545 MB in a full run) instead of its own.
_PEAK = (
    "import re, sys; from kbls.indexing.parse import parse_note; "
    "note = parse_note('big.md', sys.stdin.read()); "
    "hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()); "
    "print(int(hwm.group(1)) // 1024, len(note.sections))"
)


@pytest.mark.parametrize(
    "text",
    [
        "- a\n" * 490_000,
        "".join(f"# h{i}\n" for i in range(240_000)),
        "a|b\n-|-\n" + "x|y\n" * 490_000,
        "> a\n" * 490_000,
    ],
    ids=["list", "headings", "table", "quote"],
)
def test_parsing_a_2_mb_pathological_note_stays_under_160_mb(text: str) -> None:
    """Measured before windows and caps: list 976 MB, table 1.4 GB, headings 403 MB (~40 MB baseline)."""
    assert len(text) < 2_000_000 + 300_000
    out = subprocess.run([sys.executable, "-c", _PEAK], input=text, capture_output=True, text=True, timeout=300, check=True)
    peak_mb, sections = map(int, out.stdout.split())
    assert peak_mb < 160, peak_mb
    assert sections <= parse.MAX_SECTIONS


@pytest.mark.parametrize("line", ["- " * 100_000, " - " * 100_000, "* " * 100_000, "1. " * 100_000, "> " * 100_000])
def test_a_line_of_nested_container_markers_parses_in_linear_time(line: str) -> None:
    """Each nesting level re-reads the rest of the line: the nesting cap keeps this linear."""
    started = time.perf_counter()
    parse_note("n.md", line + "a\n\n# Heading\n")
    elapsed = time.perf_counter() - started
    assert elapsed < 2.0 * len(line) / 100_000 + 0.5, f"{elapsed:.1f}s for {len(line)} characters"
