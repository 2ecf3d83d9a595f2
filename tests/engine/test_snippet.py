"""`make_snippet`: which line a hit shows, and that the fast version shows exactly what the plain
reading of the rule (kept here as `plain_snippet`) shows, on any text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kbls.retrieval.snippet import SNIPPET_CHARS, make_snippet

_FENCE_OR_RULE = re.compile(r"^\s*(```|~~~|---+\s*$|===+\s*$)")


def plain_snippet(body: str, terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """The rule read plainly (the code before it was made fast): every line scored by every term."""
    lines = [line for line in body.split("\n") if line.strip() and not _FENCE_OR_RULE.match(line)]
    if not lines:
        return ""
    best = 0
    content = [i for i, line in enumerate(lines) if not line.lstrip().startswith("#")]
    if content:
        best = content[0]
    if terms:
        scores = [
            sum(1 for t in terms if t in line.lower()) - (0.5 if line.lstrip().startswith("#") else 0) for line in lines
        ]
        if max(scores) >= 1:
            best = max(range(len(lines)), key=lambda i: (scores[i], -i))
    following = [line for line in lines[best + 1 :] if not line.lstrip().startswith("#")]
    text = " ".join(" ".join([lines[best], *following]).split())
    line = " ".join(lines[best].split())
    if terms and len(line) > width:
        lowered = line.lower()
        first = min((lowered.find(t) for t in terms if t in lowered), default=0)
        start = max(0, first - width // 3)
        text = ("…" if start else "") + line[start:]
    if len(text) > width:
        cut = text[:width].rsplit(" ", 1)[0] if " " in text[:width] else text[:width]
        text = cut + "…"
    return text


BODY = """# Ownership

Intro line about nothing in particular.

```rust
let borrowed = &value; // borrow
```

## Borrowing

A mutable borrow of a value excludes every other borrow.
---
Another line."""


def test_the_line_holding_most_query_words_is_shown() -> None:
    assert make_snippet(BODY, ["mutable", "borrow"]).startswith("A mutable borrow of a value")


def test_a_heading_counts_less_than_prose_and_fences_and_headings_are_never_shown_after_it() -> None:
    # "borrowing" is only in a heading: half a word, so the first prose line is shown.
    snippet = make_snippet(BODY, ["borrowing"])
    assert snippet.startswith("Intro line") and "```" not in snippet and "#" not in snippet
    # "borrow" first in a line of code: shown, though a later line holds it too.
    assert make_snippet(BODY, ["borrow"]).startswith("let borrowed = &value; // borrow A mutable")


def test_without_a_matching_word_the_first_prose_line_and_what_follows_are_shown() -> None:
    assert make_snippet(BODY, ["kettle"]) == (
        "Intro line about nothing in particular. let borrowed = &value; // borrow A mutable borrow of a value "
        "excludes every other borrow. Another line."
    )


def test_a_long_snippet_is_cut_at_a_word_and_a_long_line_starts_near_the_first_word() -> None:
    long_line = " ".join(f"word{i}" for i in range(200)) + " kettle " + " ".join(f"tail{i}" for i in range(50))
    snippet = make_snippet(long_line, ["kettle"])
    assert snippet.startswith("…") and "kettle" in snippet and snippet.endswith("…")
    assert len(snippet) <= SNIPPET_CHARS + 2
    prose = make_snippet("\n".join(f"line {i} of a long note" for i in range(100)), [])
    assert prose.endswith("…") and len(prose) <= SNIPPET_CHARS + 1


# Lines of words, headings, fences, rules and blank lines, with the characters whose lowercase
# is longer (İ) or depends on what follows (Σ), so that lines and offsets are put to the test.
_WORDS = st.sampled_from(["borrow", "Borrow", "mutable", "kettle", "İstanbul", "ΟΔΟΣ", "σ", "x", "é", "  ", "\t", "#"])
_TERMS = st.sampled_from(["borrow", "mutable", "kettle", "istanbul", "i̇stanbul", "οδος", "σ", "x", "é"])
_LINE = st.one_of(
    st.lists(_WORDS, max_size=12).map(" ".join),
    st.sampled_from(["", "   ", "```", "```rust", "~~~", "---", "===", "# Heading", "## Borrow here", "  # x"]),
    st.text(max_size=30),
)


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(_LINE, max_size=25),
    terms=st.lists(_TERMS, max_size=4, unique=True),
    width=st.sampled_from([SNIPPET_CHARS, 40, 5]),
)
def test_the_snippet_is_exactly_what_the_plain_rule_gives(lines: list[str], terms: list[str], width: int) -> None:
    body = "\n".join(lines)
    assert make_snippet(body, terms, width) == plain_snippet(body, terms, width)
