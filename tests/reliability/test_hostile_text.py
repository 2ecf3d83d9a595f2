"""Issue 6, hostile input: lines built to make the note parser's regexes scan quadratically.

Before the fix a 60 KB line of `[[` took 46 s to parse (and a 2 MB one, which `max_file_bytes`
admits, hours): the indexer was stuck on one file. Each line here is ~200 KB and must parse in
well under a second per 100 KB, in every note kind.
"""

from __future__ import annotations

import time

import pytest

from kbls.indexing.parse import parse_note
from kbls.retrieval.snippet import make_snippet, snippet_terms

N = 100_000
LINES = {
    "wiki-open": "[[" * N,
    "wiki-pipe": "[[a|" * N,
    "wiki-hash": "[[a#" * N,
    "mdlink-open": "[](" * N,
    "mdlink-target": "[a](b" * N,
    "mdlink-title": '[a](b "' * N,
    "mdlink-spaces": "[a](" + " " * N,
    "brackets": "[" * N + "]",
    "close-brackets": "]" * N,
    "atx-spaces": "# " + " " * N + "x",
    "atx-closing": "# a" + " #" * N + "x",
    "hashes": "#" * N,
    "tags": "#a" * N,
    "backticks": "`" * N,
    "angle": "[a](<" * N,
    "setext": "a\n" + "=" * N,
    "rst": "x\n" + "=" * N + "\n" + "-" * N,
}


@pytest.mark.parametrize("kind", ["md", "rst", "txt"])
@pytest.mark.parametrize("name", sorted(LINES))
def test_an_adversarial_line_parses_in_linear_time(name: str, kind: str) -> None:
    text = LINES[name]
    started = time.perf_counter()
    parse_note(f"note.{kind}", text)
    elapsed = time.perf_counter() - started
    assert elapsed < 2.0 * len(text) / 100_000 + 0.5, f"{elapsed:.1f}s for {len(text)} characters"


def test_links_still_parse() -> None:
    note = parse_note("dir/a.md", "See [[Target Note|alias]] and [text](other.md \"t\") and [x](<spaced name.md>).\n")
    assert ("wiki", "Target Note") in note.links
    assert ("path", "dir/other.md") in note.links


def test_snippets_of_a_huge_chunk_are_bounded() -> None:
    body = ("word " * 200_000) + "needle"
    started = time.perf_counter()
    snippet = make_snippet(body, snippet_terms("needle word " * 16))
    assert time.perf_counter() - started < 2.0
    assert len(snippet) < 2000
