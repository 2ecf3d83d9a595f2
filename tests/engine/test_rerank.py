"""The reranker hook (`search.rerank`) with a real fastembed TextCrossEncoder running a tiny
cross-encoder ONNX this test builds itself: its "relevance" is how often the token `needle`
occurs in the query and chunk, so the order it must produce is known. No real cross-encoder
weights are available offline; this checks the plumbing, not quality."""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.corpus import write

from kbls.config import Config, RerankConfig, SearchConfig
from kbls.engine import Engine
from kbls.errors import ModelError
from kbls.indexing.embed import Embedder

onnx = pytest.importorskip("onnx", reason="the test extra installs onnx")

TOKENIZER_DIR = Path(__file__).resolve().parents[2] / "server" / "kbls" / "model"
MODEL_NAME = "kbls-test/needle-counter"


def build_needle_counter(folder: Path) -> None:
    """model.onnx: logits[b, 0] = number of `needle` tokens in input_ids[b]; BERT tokenizer files."""
    from onnx import TensorProto, helper
    from tokenizers import Tokenizer

    needle = Tokenizer.from_file(str(TOKENIZER_DIR / "tokenizer.json")).token_to_id("needle")
    assert needle is not None
    nodes = [
        helper.make_node("Constant", [], ["needle"], value=helper.make_tensor("n", TensorProto.INT64, [], [needle])),
        helper.make_node("Constant", [], ["axes"], value=helper.make_tensor("a", TensorProto.INT64, [1], [1])),
        helper.make_node("Equal", ["input_ids", "needle"], ["hit"]),
        helper.make_node("Cast", ["hit"], ["hits"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["hits", "axes"], ["logits"], keepdims=1),
    ]
    graph = helper.make_graph(
        nodes, "needle_counter",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / "model.onnx"))
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(TOKENIZER_DIR / name, folder / name)
    (folder / "config.json").write_text('{"model_type": "bert"}')


@pytest.fixture(scope="module")
def needle_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from fastembed.common.model_description import ModelSource
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    folder = tmp_path_factory.mktemp("needle-counter")
    build_needle_counter(folder)
    known = {m["model"].lower() for m in TextCrossEncoder.list_supported_models()}
    if MODEL_NAME not in known:
        TextCrossEncoder.add_custom_model(
            model=MODEL_NAME, sources=ModelSource(hf=MODEL_NAME), model_file="model.onnx",
            description="test-only: counts the token `needle`", license="apache-2.0",
        )
    return folder


@pytest.fixture(scope="module")
def haystack(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Engine]:
    base = tmp_path_factory.mktemp("haystack")
    write(base / "notes", "sewing.md", "# Sewing\n\nThread the needle, then sew the hem with small stitches.\n")
    write(base / "notes", "pins.md", "# Pins and needle\n\nA needle, a needle case and a needle threader.\n")
    write(base / "notes", "hay.md", "# Hay\n\nFind a needle in a haystack: sewing with hay bales is hard.\n")
    engine = Engine(base / "notes", store_dir=base / "store", embedder=embedder)
    engine.index()
    yield engine
    engine.close()


def reranking(engine: Engine, model: Path | None, name: str = MODEL_NAME) -> Engine:
    rerank = RerankConfig(model=name, path=str(model) if model else None, candidates=10)
    config = Config(search=SearchConfig(min_score=0.0, rerank=rerank))
    return Engine(engine.root, config=config, store_dir=engine.store_dir, embedder=engine.embedder)


def test_the_cross_encoder_orders_the_candidates_and_gives_their_scores(haystack, needle_model):
    engine = reranking(haystack, needle_model)
    try:
        hits = engine.search("sewing thread", limit=3, group_by_file=True).hits
    finally:
        engine.close()
    assert hits[0].path == "pins.md"  # the most needles, not the best meaning
    for hit in hits:  # the score is the sigmoid of the logit: the needles in breadcrumb and chunk
        lines = (haystack.root / hit.path).read_text().split("\n")[hit.start_line : hit.end_line + 1]
        needles = " ".join([hit.breadcrumb, *lines]).lower().replace(",", " ").split().count("needle")
        assert hit.score == pytest.approx(1 / (1 + math.exp(-needles)), abs=1e-4), (hit.path, needles)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_without_a_reranker_the_fused_ranking_stands(haystack):
    hits = haystack.search("sewing thread", limit=3, group_by_file=True).hits
    assert hits[0].path == "sewing.md"


def test_a_reranker_that_cannot_load_is_a_model_error(haystack, tmp_path):
    engine = reranking(haystack, tmp_path / "missing", name="kbls-test/not-registered")
    try:
        with pytest.raises(ModelError, match="reranker"):
            engine.search("sewing thread", limit=3)
    finally:
        engine.close()
