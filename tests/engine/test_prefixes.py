"""Model-family prefixes: e5 models read `query: ` / `passage: ` before the text, bge models an
instruction before the query; the chunk budget leaves room for the passage prefix. Checked on
the text the embedder gives the model, so no e5 weights are needed."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kbls.config import ChunkConfig
from kbls.indexing.chunk import Chunker
from kbls.indexing.embed import BGE_QUERY_INSTRUCTION, Embedder, model_prefixes
from kbls.indexing.parse import parse_note


@pytest.mark.parametrize(
    "name",
    ["intfloat/e5-small-v2", "intfloat/multilingual-e5-large", "intfloat/e5-base", "intfloat/multilingual-e5-small"],
)
def test_e5_models_get_query_and_passage_prefixes(name):
    assert model_prefixes(name) == ("query: ", "passage: ")


@pytest.mark.parametrize(
    ("name", "prefixes"),
    [
        ("BAAI/bge-small-en-v1.5", (BGE_QUERY_INSTRUCTION, "")),
        ("BAAI/bge-small-zh-v1.5", ("", "")),
        ("BAAI/bge-m3", ("", "")),
        ("sentence-transformers/all-MiniLM-L6-v2", ("", "")),
        ("nomic-ai/nomic-embed-text-v1.5", ("", "")),  # "e5" inside "v1.5" is not the e5 family
        ("someone/three5-model", ("", "")),
    ],
)
def test_other_models_get_their_own_or_none(name, prefixes):
    assert model_prefixes(name) == prefixes


class E5Text:
    """The bundled tokenizer standing in for an e5 model's: same text path, e5 prefixes."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.max_tokens = inner.max_tokens
        self.query_prefix, self.passage_prefix = model_prefixes("intfloat/e5-small-v2")

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self.inner.count_tokens(texts)

    def split_by_tokens(self, text: str, budget: int) -> list[tuple[int, int]]:
        return self.inner.split_by_tokens(text, budget)


def test_the_embedder_gives_the_model_prefixed_text(tokenizer_only: Embedder, monkeypatch: pytest.MonkeyPatch):
    seen: list[list[str]] = []
    monkeypatch.setattr(tokenizer_only, "query_prefix", "query: ")
    monkeypatch.setattr(tokenizer_only, "passage_prefix", "passage: ")
    monkeypatch.setattr(tokenizer_only, "_embed", lambda texts: seen.append(texts) or [[0.0]])
    tokenizer_only.embed_query("borrow rules")
    tokenizer_only.embed_passages(["Ownership\n\nEach value has one owner."])
    assert seen == [["query: borrow rules"], ["passage: Ownership\n\nEach value has one owner."]]


def test_the_bundled_model_reads_the_text_as_is(tokenizer_only: Embedder):
    assert tokenizer_only.query_text("borrow rules") == "borrow rules"
    assert tokenizer_only.passage_text("x") == "x"


def test_chunks_leave_room_for_the_passage_prefix(tokenizer_only: Embedder):
    counter = E5Text(tokenizer_only)
    plain = Chunker(tokenizer_only, ChunkConfig(max_tokens=64, overlap_tokens=8, min_tokens=8))
    e5 = Chunker(counter, ChunkConfig(max_tokens=64, overlap_tokens=8, min_tokens=8))
    assert e5.budget < plain.budget
    note = parse_note("long.md", "# Long\n\n" + "\n".join(f"Line {i} says something about borrowing." for i in range(60)))
    for chunk in e5.chunk(note):
        assert tokenizer_only.count_tokens(["passage: " + chunk.text])[0] <= 64
