"""`make_snippet`: which sentence a hit shows (issue 19 item 6: a raw table row, a Python dict
dump and "And this had done the trick!" were shown), and what holds on any text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.corpus import make_workspace

from kbls.engine import Engine
from kbls.indexing.embed import Embedder
from kbls.retrieval.snippet import SNIPPET_CHARS, Kind, make_snippet, snippet_terms, units

SECTION = """## Final steps

| Step | Commit | Parent |
|---|---|---|
| Last dirty commit | 4af64070 | d404ebd0 |

```python
{'commit': '4af64070', 'parent': 'd404ebd0'}
```

And this had done the trick! To undo the last commit, run `git reset --soft HEAD~1`. It keeps the
changes staged.

- Afterwards, rebase the branch onto main."""


def snippet(query: str, body: str = SECTION, width: int = SNIPPET_CHARS) -> str:
    return make_snippet(body, snippet_terms(query), width)


def test_the_sentence_holding_the_query_words_is_shown_not_the_table_row_or_the_code() -> None:
    # "commit" is in the table row and the dict dump too; "undo", "last" and "commit" are in one sentence.
    assert snippet("how do I undo the last git commit").startswith("To undo the last commit, run")


def test_function_words_do_not_choose_the_sentence() -> None:
    # "this", "had", "the" are the query's only words in the first sentence: they count for nothing.
    assert snippet("this had the commit").startswith("To undo the last commit")


def test_a_table_row_or_code_is_shown_where_the_match_is_and_reads_as_cells() -> None:
    assert snippet("dirty commit 4af64070") == "Last dirty commit · 4af64070 · d404ebd0"
    assert snippet("dirty d404ebd0") == "Last dirty commit · 4af64070 · d404ebd0"
    assert snippet("parent d404ebd0") == "{'commit': '4af64070', 'parent': 'd404ebd0'}"
    # a table's header names columns: never chosen for a word, so the opening sentence is shown
    assert snippet("step").startswith("To undo the last commit")
    code = "Intro to the setup.\n\n```\nconfig = {'retries': 3, 'backoff': 2.5}\n```"
    assert snippet("retries backoff", code) == "config = {'retries': 3, 'backoff': 2.5}"


def test_a_word_counts_in_its_other_forms_at_the_start_of_a_word() -> None:
    assert snippet("rebasing branches").startswith("Afterwards, rebase the branch")
    assert snippet("committed").startswith("To undo the last commit")
    # a short word counts whole only: "git" is not in "digit"
    body = "The digit sum of a number.\n\nUse git bisect to find the commit."
    assert snippet("git", body).startswith("Use git bisect")


def test_without_a_query_word_the_first_sentence_that_says_something_is_shown() -> None:
    assert snippet("kettle").startswith("To undo the last commit, run `git reset --soft HEAD~1`. It keeps the changes staged.")
    assert make_snippet("Short.\n\nAlso short.", []) == "Short. Also short."
    assert make_snippet("# Only a heading", []) == "Only a heading"
    assert make_snippet("| a | b |\n|---|---|\n| 1 | 2 |", []) == "1 · 2"


def test_the_prose_after_the_sentence_follows_up_to_the_width_and_is_cut_at_a_word() -> None:
    text = snippet("rebase", width=40)
    assert text == "Afterwards, rebase the branch onto main."
    long = " ".join(f"word{i}" for i in range(200)) + " kettle " + " ".join(f"tail{i}" for i in range(50))
    shown = snippet("kettle", long)
    assert shown.startswith("…") and "kettle" in shown and shown.endswith("…") and len(shown) <= SNIPPET_CHARS + 2


def test_units_split_sentences_but_not_abbreviations_or_versions() -> None:
    found = units("Use e.g. the v1.2 release. Then stop! Why? Because.\n> Quoted line.\n1. First item")
    assert [(u.text, u.kind) for u in found] == [
        ("Use e.g. the v1.2 release.", Kind.PROSE), ("Then stop!", Kind.PROSE), ("Why?", Kind.PROSE),
        ("Because.", Kind.PROSE), ("Quoted line.", Kind.PROSE), ("First item", Kind.PROSE),
    ]


#: `make demo`'s search, over the notes it indexes (tests/fixtures/notes)
DEMO_QUERY = "who owns a value after it is moved"


@pytest.mark.parametrize("mode", ["hybrid", "lexical", "semantic"])
def test_the_demo_s_snippets_say_each_sentence_once_and_stay_in_their_section(
    tmp_path: Path, embedder: Embedder, mode: str
) -> None:
    # The best sentence was shown, then its paragraph again from the start: "After a move, the
    # new binding owns … Assigning a `String` … After a move, the new binding…"
    engine = Engine(make_workspace(tmp_path), store_dir=tmp_path / "store", embedder=embedder)
    try:
        engine.index()
        hits = engine.search(DEMO_QUERY, mode=mode, limit=5).hits
    finally:
        engine.close()
    assert hits, mode
    for hit in hits:
        said = [u.text.rstrip("…") for u in units(hit.snippet)]
        assert len(said) == len(set(said)), hit.snippet
        assert not any(a != b and b.startswith(a) for a in said for b in said), hit.snippet
    moves = next(h for h in hits if "new binding" in h.snippet)
    # the sentence with the query's words, read on to the end of its section ("## Moves"): not
    # into the "## Clone" section that shares its chunk
    assert moves.snippet == "After a move, the new binding owns the heap data and the old one is invalid.", moves.snippet


_WORDS = st.sampled_from(["borrow", "Borrow", "mutable", "kettle", "İstanbul", "ΟΔΟΣ", "σ", "x", "é", ".", "|", "{", "'"])
_LINE = st.one_of(
    st.lists(_WORDS, max_size=12).map(" ".join),
    st.sampled_from(["", "   ", "```", "```rust", "~~~", "---", "|---|---|", "# Heading", "## Borrow here", "    code"]),
    st.text(max_size=30),
)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(_LINE, max_size=25),
    query=st.sampled_from(["", "borrow", "mutable kettle", "istanbul", "οδος σ", "x é"]),
    width=st.sampled_from([SNIPPET_CHARS, 40, 5]),
)
def test_any_text_gives_one_line_within_the_width_without_fences_or_rules(lines: list[str], query: str, width: int) -> None:
    text = make_snippet("\n".join(lines), snippet_terms(query), width)
    assert "\n" not in text and len(text) <= width + 2
    assert "```" not in text and "~~~" not in text and text == text.strip()
