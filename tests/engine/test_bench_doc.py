"""benchmarks/bench_engine.py rewrites only its own section of docs/benchmarks.md."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_engine.py"


def _bench(monkeypatch, doc: Path):
    spec = importlib.util.spec_from_file_location("bench_engine", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "DOC", doc)
    return module


def _set(ndcg: dict[str, float]) -> dict:
    return {
        "files": 198, "chunks": 750, "off_topic_empty": 20, "off_topic": 20,
        "modes": {m: {"ndcg": n, "ndcg_binary": n + 0.01, "mrr": 0.5, "recall": 0.9, "queries": 40} for m, n in ndcg.items()},
        "baseline": {m: {"ndcg_binary": 0.7, "mrr": 0.6, "recall": 0.8} for m in ndcg},
    }


RESULTS = {
    "quality": {
        "date": "2026-01-01 00:00 UTC", "machine": {"nproc": "2", "cpu": "Test CPU", "load": "1.5", "commit": "abc1234"},
        "sets": {
            "rust-by-example": _set({"hybrid": 0.88, "semantic": 0.80, "lexical": 0.78}),
            "til": _set({"hybrid": 0.89, "semantic": 0.87, "lexical": 0.64}),
        },
    },
}


def test_the_engine_section_is_replaced_and_the_rest_kept(tmp_path, monkeypatch):
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n<!-- daemon:start -->\n## Daemon\nkept\n<!-- daemon:end -->\n\n"
                   "<!-- engine:start -->\nold figures\n<!-- engine:end -->\n\ntrailer\n")
    bench = _bench(monkeypatch, doc)
    bench.write_doc(RESULTS)
    text = doc.read_text()
    assert "## Daemon\nkept" in text and text.endswith("trailer\n") and "old figures" not in text
    assert "| hybrid | **0.890** | 0.700 | 0.880 | 0.500 | 0.600 | 0.900 | 0.800 |" in text  # kbls beside the baseline
    assert "**TIL (Simon Willison's notes)**" in text and "(hybrid): 20 of 20" in text
    assert "load average 1.5" in text and "commit abc1234" in text
    bench.write_doc(RESULTS)
    assert doc.read_text() == text  # idempotent


def test_the_doc_is_created_when_missing(tmp_path, monkeypatch):
    doc = tmp_path / "docs" / "benchmarks.md"
    _bench(monkeypatch, doc).write_doc(RESULTS)
    text = doc.read_text()
    assert text.startswith("# Benchmarks") and "<!-- engine:start -->\n## Engine" in text and "<!-- engine:end -->" in text


def test_blocks_without_results_are_kept(tmp_path, monkeypatch):
    """A phase not run on this machine (or a hand-measured block) keeps what the doc had."""
    doc = tmp_path / "benchmarks.md"
    doc.write_text("<!-- engine:start -->\n## Engine\n\n### Retrieval quality (shared eval sets)\n\nold\n\n"
                   "### Unchanged re-index of rust-web-src\n\n- median **0.62 s**\n<!-- engine:end -->\n")
    bench = _bench(monkeypatch, doc)
    bench.write_doc(RESULTS)
    text = doc.read_text()
    assert "\nold\n" not in text and "| hybrid | **0.890**" in text  # regenerated
    assert "### Unchanged re-index of rust-web-src\n\n- median **0.62 s**\n" in text  # kept
    bench.write_doc(RESULTS)
    assert doc.read_text() == text
