"""The chunker: token budget, line coverage and line ranges (property tests), breadcrumbs,
fenced code, section boundaries and long lines, all measured with the model's own tokenizer."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbls.config import ChunkConfig
from kbls.indexing.chunk import (
    BREADCRUMB_SEP,
    MIN_OPENING_TOKENS,
    OPENING_TOKENS,
    Chunker,
    embedded_text,
    opening_words,
)
from kbls.indexing.parse import parse_note

# -- generated notes -------------------------------------------------------------------------
WORDS = st.sampled_from(
    [
        "the", "borrow", "checker", "owns", "value", "lifetime", "trait", "generic", "closure", "iterator", "async",
        "await", "ça", "naïve", "東京", "данные", "🦀", "x_y", "foo::bar()", "#tag", "[[Link]]", "`code`", "—", "12345",
        "0xdeadbeef",
    ]
)
LONG_TOKEN = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=50, max_size=400)


@st.composite
def paragraphs(draw) -> str:
    kind = draw(st.sampled_from(["words", "words", "long_line", "weird"]))
    if kind == "words":
        lines = draw(st.lists(st.lists(WORDS, min_size=1, max_size=25).map(" ".join), min_size=1, max_size=6))
        return "\n".join(lines)
    if kind == "long_line":
        # Minified text: one line far over any budget, with or without spaces.
        return draw(st.one_of(LONG_TOKEN, st.lists(WORDS, min_size=200, max_size=600).map(" ".join)))
    return draw(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=300))


@st.composite
def code_fences(draw) -> str:
    body = draw(st.lists(st.lists(WORDS, min_size=0, max_size=12).map(" ".join), min_size=0, max_size=40))
    closed = draw(st.booleans())
    return "\n".join(["```rust", *body] + (["```"] if closed else []))


@st.composite
def headings(draw) -> str:
    level = draw(st.integers(1, 6))
    text = draw(st.one_of(st.lists(WORDS, min_size=1, max_size=6).map(" ".join),
                          st.lists(WORDS, min_size=60, max_size=120).map(" ".join)))
    return "#" * level + " " + text


@st.composite
def markdown_notes(draw) -> str:
    parts = []
    if draw(st.booleans()):
        title = draw(st.lists(WORDS, min_size=1, max_size=80).map(" ".join))
        parts.append(f"---\ntitle: \"{title}\"\ntags: [a, b]\n---")
    parts += draw(st.lists(st.one_of(paragraphs(), code_fences(), headings()), min_size=0, max_size=25))
    return "\n\n".join(parts)


def _budget(chunker: Chunker) -> int:
    return min(chunker.config.max_tokens, chunker.counter.max_tokens)


CONFIGS = st.sampled_from([ChunkConfig(), ChunkConfig(max_tokens=64, overlap_tokens=16, min_tokens=8),
                           ChunkConfig(max_tokens=128, overlap_tokens=0, min_tokens=0)])
#: KBLS_PROPERTY_EXAMPLES=2000 for a deeper hunt; 100 keeps the suite within its time budget.
PROPERTY = settings(
    max_examples=int(os.environ.get("KBLS_PROPERTY_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _body_lines(text: str) -> list[int]:
    """0-based numbers of the lines a note's chunks must cover: non-blank, after frontmatter."""
    lines = text.split("\n")
    first = 0
    if lines[0].rstrip() == "---":
        closing = [i for i in range(1, min(len(lines), 2000)) if lines[i].rstrip() in ("---", "...")]
        first = closing[0] + 1 if closing else 0
    return [i for i in range(first, len(lines)) if lines[i].strip()]


@PROPERTY
@given(text=markdown_notes(), config=CONFIGS)
def test_no_chunk_is_over_the_token_budget(tokenizer_only, text, config):
    chunker = Chunker(tokenizer_only, config)
    for chunk in chunker.chunk(parse_note("n.md", text)):
        measured = tokenizer_only.count_tokens([tokenizer_only.passage_prefix + chunk.text])[0]
        assert measured <= _budget(chunker), (measured, chunk.text)
        assert chunk.tokens == measured


@PROPERTY
@given(text=markdown_notes(), config=CONFIGS)
def test_every_line_of_the_body_is_covered(tokenizer_only, text, config):
    chunks = Chunker(tokenizer_only, config).chunk(parse_note("n.md", text))
    covered = set()
    for chunk in chunks:
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    missing = [i for i in _body_lines(text) if i not in covered]
    assert not missing, missing


@PROPERTY
@given(text=markdown_notes(), config=CONFIGS)
def test_every_line_is_in_the_text_of_a_chunk_covering_it(tokenizer_only, text, config):
    """Coverage by range is not enough: each word of a body line is in a covering chunk's body."""
    lines = text.split("\n")
    chunks = Chunker(tokenizer_only, config).chunk(parse_note("n.md", text))
    for i in _body_lines(text):
        owners = "".join("".join(c.body.split()) for c in chunks if c.start_line <= i <= c.end_line)
        missing = [word for word in lines[i].split() if word not in owners]
        assert not missing, (i, lines[i], missing)


@PROPERTY
@given(text=markdown_notes(), config=CONFIGS)
def test_line_ranges_point_at_the_chunk_text(tokenizer_only, text, config):
    """Every line of a chunk's body is (a piece of) a source line inside its range."""
    lines = text.split("\n")
    note = parse_note("n.md", text)
    opening = opening_words(note)
    for index, chunk in enumerate(Chunker(tokenizer_only, config).chunk(note)):
        assert 0 <= chunk.start_line <= chunk.end_line < len(lines)
        window = lines[chunk.start_line : chunk.end_line + 1]
        for body_line in chunk.body.split("\n"):
            assert any(body_line in source for source in window), (body_line, chunk.start_line, chunk.end_line)
        if note.title_from_name:
            # A title taken from the file name stays out of the embedded text (renames are free).
            crumb = chunk.breadcrumb.split(BREADCRUMB_SEP, 1)[1] if BREADCRUMB_SEP in chunk.breadcrumb else ""
        else:
            crumb = chunk.breadcrumb
        if chunk.text == embedded_text(crumb, chunk.body):
            continue
        # Otherwise a later chunk with the note's opening words between breadcrumb and body.
        assert index > 0, chunk.text
        head = chunk.text[: len(chunk.text) - len(chunk.body) - 2]
        context = head[len(crumb) + 1 :] if crumb else head
        assert chunk.text == embedded_text(crumb, chunk.body, context)
        assert context and opening.startswith(context), (context, opening)


# -- specific behaviours ---------------------------------------------------------------------
def _para(topic: str, sentences: int = 6) -> str:
    """A paragraph of about 15 tokens per sentence: enough to make a section non-tiny."""
    return " ".join(f"The {topic} sentence number {i} explains one more detail of {topic}." for i in range(sentences))


def test_breadcrumb_is_title_section_subsection(tokenizer_only):
    text = f"# Guide\n\n{_para('intro')}\n\n## Setup\n\n{_para('setup')}\n\n### Linux\n\n{_para('linux')}\n"
    chunks = Chunker(tokenizer_only).chunk(parse_note("guide.md", text))
    crumbs = [c.breadcrumb for c in chunks]
    assert crumbs == ["Guide", "Guide > Setup", "Guide > Setup > Linux"]
    assert chunks[0].text.startswith("Guide\n\n")
    # Later chunks: breadcrumb, the note's opening words, a blank line, the body.
    opening = opening_words(parse_note("guide.md", text))
    assert opening.startswith("The intro sentence number 0")
    for chunk in chunks[1:]:
        assert chunk.text.startswith(chunk.breadcrumb + "\n")
        context = chunk.text[len(chunk.breadcrumb) + 1 : len(chunk.text) - len(chunk.body) - 2]
        assert context and opening.startswith(context)
    assert BREADCRUMB_SEP == " > "


def test_later_chunks_embed_the_notes_opening_words_within_the_models_limit(tokenizer_only):
    """The first chunk holds the opening and is left as it is; every later one embeds the
    opening's first `OPENING_TOKENS` tokens (headings left out), or as many as its room allows,
    or none when fewer than `MIN_OPENING_TOKENS` fit."""
    intro = "Sourdough needs a lively starter fed twice a day at room temperature before baking. " * 3
    text = f"# Bread\n\n{intro}\n\n## Shaping\n\n{_para('shaping', 14)}\n\n## Baking\n\n{_para('baking', 3)}\n"
    chunker = Chunker(tokenizer_only)
    chunks = chunker.chunk(parse_note("bread.md", text))
    assert len(chunks) >= 3
    assert "Bread" not in opening_words(parse_note("bread.md", text))
    assert chunks[0].text == embedded_text("Bread", chunks[0].body)
    limit = _budget(chunker)
    specials = tokenizer_only.count_tokens([""])[0]
    for chunk in chunks[1:]:
        plain = embedded_text(chunk.breadcrumb, chunk.body)
        plain_tokens = tokenizer_only.count_tokens([plain])[0]
        room = limit - plain_tokens
        if room < MIN_OPENING_TOKENS:
            assert chunk.text == plain
            continue
        context = chunk.text[len(chunk.breadcrumb) + 1 : len(chunk.text) - len(chunk.body) - 2]
        context_tokens = tokenizer_only.count_tokens([context])[0] - specials
        assert context_tokens == min(OPENING_TOKENS, room), (context, room)
        assert context.startswith("Sourdough needs a lively starter")
        assert chunk.tokens == tokenizer_only.count_tokens([chunk.text])[0] <= limit
    # At least one chunk had room for the whole opening: the short last section.
    assert any(len(c.text) > len(embedded_text(c.breadcrumb, c.body)) + 60 for c in chunks[1:])


def test_a_note_of_one_chunk_or_without_text_embeds_no_opening(tokenizer_only):
    chunker = Chunker(tokenizer_only)
    single = chunker.chunk(parse_note("one.md", "# One\n\nA short note about tea.\n"))
    assert [c.text for c in single] == ["One\n\n# One\nA short note about tea."]
    headings_only = parse_note("h.md", "# A\n\n## B\n\n## C\n")
    assert opening_words(headings_only) == ""


def test_fenced_code_is_kept_whole_where_it_fits(tokenizer_only):
    code = "\n".join(f"    let value_{i} = compute({i}); // step {i}" for i in range(12))
    text = f"# Code\n\n{_para('prose', 8)}\n\n```rust\n{code}\n```\n\n{_para('after', 8)}\n"
    chunks = Chunker(tokenizer_only).chunk(parse_note("code.md", text))
    fence = f"```rust\n{code}\n```"
    holders = [c for c in chunks if "let value_0" in c.body]
    assert len(holders) == 1 and fence in holders[0].body
    assert not any("let value_5" in c.body for c in chunks if c is not holders[0])


def test_no_chunk_spans_two_non_tiny_sections(tokenizer_only):
    sections = [f"## Part {i}\n\n{_para(f'topic{i}', 8)}" for i in range(6)]
    text = "# Book\n\n" + "\n\n".join(sections) + "\n"
    chunks = Chunker(tokenizer_only).chunk(parse_note("book.md", text))
    assert max(_non_tiny_sections_per_chunk(tokenizer_only, text, chunks, ChunkConfig())) == 1
    for i in range(1, 6):  # Part 0 may take in the tiny title-only section (crumb: "Book")
        holders = [c.breadcrumb for c in chunks if f"topic{i} " in c.body]
        assert holders == [f"Book > Part {i}"]


def test_the_tail_of_a_split_section_is_not_merged_into_the_next_section(tokenizer_only):
    """Section One is split by the budget and its last piece is small; that piece must not be
    glued to section Two (which would span two non-tiny sections and label Two's text with
    the common breadcrumb `Book` instead of `Book > Two`)."""
    text = f"# Book\n\n## One\n\n{_para('alpha', 21)}\n\n## Two\n\n{_para('beta', 5)}\n"
    chunks = Chunker(tokenizer_only).chunk(parse_note("book.md", text))
    assert max(_non_tiny_sections_per_chunk(tokenizer_only, text, chunks, ChunkConfig())) == 1
    two = [c for c in chunks if "beta" in c.body]
    assert [c.breadcrumb for c in two] == ["Book > Two"]


def _non_tiny_sections_per_chunk(counter, text: str, chunks, config: ChunkConfig) -> list[int]:
    """For each chunk, how many clearly non-tiny sections (>= 2 * min_tokens, so that rounding
    of token counts cannot make a borderline section flip) its line range touches."""
    note = parse_note("n.md", text)
    spans = []
    for section in note.sections:
        tokens = counter.count_tokens(["\n".join(b.text for b in section.blocks)])[0] - 2
        if tokens >= 2 * max(config.min_tokens, 1):
            spans.append((section.blocks[0].start_line, section.blocks[-1].end_line))
    return [sum(1 for a, b in spans if a <= c.end_line and c.start_line <= b) for c in chunks]


@PROPERTY
@given(text=markdown_notes(), config=CONFIGS)
def test_property_no_chunk_spans_two_non_tiny_sections(tokenizer_only, text, config):
    chunks = Chunker(tokenizer_only, config).chunk(parse_note("n.md", text))
    counts = _non_tiny_sections_per_chunk(tokenizer_only, text, chunks, config)
    spanning = [(c.breadcrumb, c.start_line, c.end_line) for c, n in zip(chunks, counts, strict=True) if n > 1]
    assert all(n <= 1 for n in counts), spanning


def test_tiny_sections_are_merged_with_a_neighbour(tokenizer_only):
    text = "# Notes\n\n## A\n\nshort one.\n\n## B\n\nshort two.\n"
    chunks = Chunker(tokenizer_only).chunk(parse_note("tiny.md", text))
    assert len(chunks) == 1
    assert "short one." in chunks[0].body and "short two." in chunks[0].body


def test_a_long_single_line_is_split_within_the_budget(tokenizer_only):
    line = " ".join(f"word{i}" for i in range(3000))  # minified text: one line, ~9000 tokens
    chunker = Chunker(tokenizer_only, ChunkConfig(overlap_tokens=0))
    chunks = chunker.chunk(parse_note("min.txt", line))
    assert len(chunks) > 10
    assert all(c.start_line == c.end_line == 0 for c in chunks)
    assert all(c.tokens <= 256 for c in chunks)
    assert "".join(c.body for c in chunks).replace(" ", "") == line.replace(" ", "")


def test_token_counts_come_from_the_model_tokenizer(tokenizer_only):
    """`Chunk.tokens` is what `Embedder.count_tokens` says for the embedded text, specials
    included, never a word count: 東京 and 🦀-heavy text has far more tokens than words."""
    text = "# 東京\n\n" + " ".join(["東京タワーの夜景🦀"] * 40) + "\n"
    chunks = Chunker(tokenizer_only).chunk(parse_note("tokyo.md", text))
    for chunk in chunks:
        assert chunk.tokens == tokenizer_only.count_tokens([chunk.text])[0]
        assert chunk.tokens <= 256
    body = [c for c in chunks if "タワー" in c.body]
    assert body and all(c.tokens > len(c.text.split()) * 3 for c in body)


@pytest.mark.parametrize("max_tokens", [32, 64, 256])
def test_a_token_dense_breadcrumb_leaves_room_for_the_body(tokenizer_only, max_tokens):
    """Found by the budget property with max_tokens=64: a title and heading of code (60
    characters of `foo::bar()` are ~36 tokens) made every chunk's breadcrumb alone exceed it."""
    text = '---\ntitle: "' + "foo::bar() " * 10 + '"\n---\n\n# ' + "foo::bar() " * 10 + "the " * 80 + "\n\nbody text\n"
    chunker = Chunker(tokenizer_only, ChunkConfig(max_tokens=max_tokens, overlap_tokens=0, min_tokens=0))
    chunks = chunker.chunk(parse_note("n.md", text))
    assert chunks and all(c.tokens <= max_tokens for c in chunks)
    assert any("body text" in c.body for c in chunks)


def test_max_tokens_is_clamped_to_the_model_limit(tokenizer_only):
    chunker = Chunker(tokenizer_only, ChunkConfig(max_tokens=4096, overlap_tokens=0))
    assert chunker.budget <= tokenizer_only.max_tokens
    text = "\n\n".join(_para(f"t{i}", 10) for i in range(20))
    assert all(c.tokens <= tokenizer_only.max_tokens for c in chunker.chunk(parse_note("big.txt", text)))


def test_only_the_preamble_speaks_for_the_whole_note(tokenizer_only):
    """The text under the title before any section heading is the opening; a note that starts
    with a section has none (its first section is about itself, not the others)."""
    diary = f"# Diary\n\n## Kitchen\n\n{_para('oven', 8)}\n\n## Journey\n\n{_para('train', 8)}\n"
    note = parse_note("diary.md", diary)
    assert opening_words(note) == ""
    chunks = Chunker(tokenizer_only).chunk(note)
    assert len(chunks) >= 2
    assert all(c.text == embedded_text(c.breadcrumb, c.body) for c in chunks)
    guide = f"# Guide\n\nHow the team ships releases.\n\n## Build\n\n{_para('build', 8)}\n"
    assert opening_words(parse_note("guide.md", guide)) == "How the team ships releases."
    untitled = "Notes taken on the train, unsorted.\n\nMore lines follow here.\n"
    assert opening_words(parse_note("untitled.txt", untitled)).startswith("Notes taken on the train")


class _CountingTokenizer:
    """The real tokenizer, recording every text it is asked to count."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.passage_prefix = inner.passage_prefix
        self.max_tokens = inner.max_tokens
        self.asked: list[str] = []

    def count_tokens(self, texts):
        self.asked.extend(texts)
        return self.inner.count_tokens(texts)

    def split_by_tokens(self, text, budget):
        return self.inner.split_by_tokens(text, budget)


def test_a_note_chunked_again_counts_only_its_changed_blocks(tokenizer_only, monkeypatch):
    """A save chunks the whole note again: the blocks it did not change are not tokenized again,
    and the chunks are those a new chunker makes."""
    counter = _CountingTokenizer(tokenizer_only)
    chunker = Chunker(counter)
    text = "# Chapter\n\n" + "\n\n".join(_para(f"topic{i}", 8) for i in range(12))
    chunker.chunk(parse_note("chapter.md", text))
    edited = text + "\n\nA new paragraph about the marmoset.\n"
    counter.asked.clear()
    again = chunker.chunk(parse_note("chapter.md", edited))
    assert "A new paragraph about the marmoset." in counter.asked
    assert not any("topic3" in asked and "marmoset" not in asked for asked in counter.asked), counter.asked
    fresh = Chunker(tokenizer_only).chunk(parse_note("chapter.md", edited))
    assert [(c.body, c.tokens, c.start_line, c.end_line) for c in again] == [
        (c.body, c.tokens, c.start_line, c.end_line) for c in fresh
    ]
    # past its bound the chunker forgets every count at once, and counts again
    monkeypatch.setattr("kbls.indexing.chunk.REMEMBERED_CHARS", 2_000)
    small = Chunker(counter)
    small.chunk(parse_note("chapter.md", text))
    counter.asked.clear()
    small.chunk(parse_note("chapter.md", text))
    assert any("topic3" in asked for asked in counter.asked)
