"""Lexical coverage measured over all of a query's candidates at once is, to the last bit, the
coverage of each candidate measured alone by the rule written out literally: a word counts when
one of its spellings is a whole token of the lowercased text (the last word also as the start of
one), weighted by its idf, in the words' order."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import given, settings
from hypothesis import strategies as st

from kbls.retrieval import lexical
from kbls.retrieval.lexical import QueryWords, Word

#: pieces texts are built of: the query's tokens, tokens that contain them, separators ("_" is
#: one), letters that lowercasing changes (İ becomes two characters, Σ depends on its neighbours).
PIECES = [
    "rust", "Rust", "trust", "rusty", "train", "trains", "Trains", "read", "to", "string", "read_to_string",
    "ca", "cache", "café", "Café", "CAFÉ", "x", "2", " ", "  ", "\n", "_", "-", ".", "/", "é", "İ", "İİİ", "ß", "ΑΣ",
    "σ", "\x00", "日本",
]
TERMS = ("rust", "trains", "read_to_string", "ca", "café", "2")


def literal_coverage(words: QueryWords, texts: tuple[str, ...]) -> float:
    """The rule, position by position (slow and plain on purpose)."""
    text = "\n".join(texts).lower()

    def starts_token(i: int) -> bool:
        return i == 0 or not text[i - 1].isalnum()

    def holds(token: str) -> bool:
        return any(
            text.startswith(token, i) and starts_token(i)
            and (i + len(token) == len(text) or not text[i + len(token)].isalnum())
            for i in range(len(text))
        )

    def holds_start(prefix: str) -> bool:
        return any(text.startswith(prefix, i) and starts_token(i) for i in range(len(text)))

    found = 0.0
    for word in words.words:
        if (
            any(holds(t) for t in word.tokens)
            or any(all(holds(t) for t in compound) for compound in word.compounds)
            or (word.term == words.prefix and holds_start(word.term))
        ):
            found += word.weight
    return found / words.total


def query_words(weights: list[float], prefix: str | None) -> QueryWords:
    """Words of TERMS as `QueryWords.of` builds them: `trains` also as `train` (its other
    number), `read_to_string` as three tokens that must all be found."""
    spellings = {"trains": frozenset({"trains", "train"})}
    words = tuple(
        Word(term, frozenset(), (("read", "to", "string"),), weight) if term == "read_to_string"
        else Word(term, spellings.get(term, frozenset({term})), (), weight)
        for term, weight in zip(TERMS, weights, strict=True)
    )
    return QueryWords(words, prefix, sum(w.weight for w in words), "")


@contextmanager
def blocks_of(chars: int) -> Iterator[None]:
    """Candidates looked through in blocks of `chars` characters (small: many blocks)."""
    saved, lexical.BLOCK_CHARS = lexical.BLOCK_CHARS, chars
    try:
        yield
    finally:
        lexical.BLOCK_CHARS = saved


candidate_texts = st.lists(
    st.lists(st.sampled_from(PIECES), max_size=12).map("".join), min_size=1, max_size=4
).map(tuple)


@settings(max_examples=300, deadline=None)
@given(
    candidates=st.lists(candidate_texts, max_size=12),
    weights=st.lists(st.floats(0.01, 10.0), min_size=len(TERMS), max_size=len(TERMS)),
    prefix=st.sampled_from((None, *TERMS)),
    block=st.sampled_from((1, 9, 40, 16_000)),
)
def test_all_candidates_at_once_measure_what_each_alone_would(
    candidates: list[tuple[str, ...]], weights: list[float], prefix: str | None, block: int,
) -> None:
    words = query_words(weights, prefix)
    with blocks_of(block):
        measured = words.coverages(candidates)
    assert measured == [literal_coverage(words, texts) for texts in candidates]


def test_whole_tokens_only_and_the_last_word_also_as_a_start() -> None:
    words = query_words([1.0] * len(TERMS), prefix="ca")
    share = 1.0 / len(TERMS)
    assert words.coverages([("trust me",), ("rusty", "rust_"), ("a train",), ("cache",), ("read to", "string")]) == [
        0.0, share, share, share, share,
    ]
    # "İ" lowercases to two characters: the candidates' offsets move, the "2" is still the first's.
    assert words.coverages([("İİ2",), ("x",)]) == [share, 0.0]
    assert words.coverages([]) == []
