"""The wire types: params validation and hit conversion (no daemon needed)."""

from __future__ import annotations

from collections import namedtuple

import msgspec
import pytest
from pygls.exceptions import JsonRpcInvalidParams

from kbls.lsp import convert
from kbls.protocol import wire as protocol
from kbls.results import Hit, Signals


def test_namedtuple_params_are_converted_like_dicts() -> None:
    # pygls delivers custom params as nested namedtuples.
    Filters = namedtuple("Filters", ["tags", "paths"])  # pygls names them all "Object"
    Params = namedtuple("Params", ["query", "limit", "filters", "groupByFile"])
    params = protocol.parse(Params("borrow", 5, Filters(["rust"], ["notes/**"]), True), protocol.SearchParams)
    assert params == protocol.SearchParams(
        query="borrow", limit=5, filters=protocol.SearchFilters(tags=["rust"], paths=["notes/**"]), group_by_file=True
    )


def test_missing_params_mean_defaults_where_allowed() -> None:
    assert protocol.parse(None, protocol.ReindexParams) == protocol.ReindexParams()
    with pytest.raises(JsonRpcInvalidParams, match="query"):
        protocol.parse(None, protocol.SearchParams)


def test_validation_error_names_the_field() -> None:
    with pytest.raises(JsonRpcInvalidParams, match=r"position\.line"):
        protocol.parse({"uri": "file:///a.md", "position": {"line": -1}}, protocol.RelatedParams)


def test_hit_range_covers_the_whole_chunk_and_is_camel_case() -> None:
    hit = Hit(path="a/b.md", start_line=3, end_line=7, title="B", breadcrumb="B > Part", snippet="…",
              score=0.5, signals=Signals(semantic=2))
    wire = msgspec.to_builtins(convert.hit_to_wire(hit, "file:///r/a/b.md", "file:///r"))
    assert wire["range"] == {"start": {"line": 3, "character": 0}, "end": {"line": 8, "character": 0}}
    assert wire["signals"] == {"semantic": 2, "lexical": None}
    result = protocol.SearchResult(hits=[], took_ms=1.5, index=protocol.IndexInfo(state="ready"))
    assert msgspec.to_builtins(result) == {
        "hits": [], "tookMs": 1.5, "index": {"state": "ready", "pending": 0, "error": None, "embedded": 1.0}
    }


def test_related_markdown_links_to_the_section_with_why() -> None:
    hit = convert.hit_to_wire(
        Hit(path="r/o.md", start_line=12, end_line=20, title="Ownership [Rust]", breadcrumb="Ownership [Rust] > Moves",
            snippet="", score=0.7, reasons=["links here", "shared tags: rust"]),
        "file:///n/r/o.md", "file:///n",
    )
    text = convert.related_markdown([hit])
    # the score first; the title once (a similarity reason names the section, issue 19 item 7)
    assert "- 0.70 [Ownership \\[Rust\\]](file:///n/r/o.md#L13) — links here; shared tags: rust" in text


def test_symbol_information_points_at_the_chunk() -> None:
    hit = convert.hit_to_wire(
        Hit(path="x.md", start_line=0, end_line=4, title="X", breadcrumb="X", snippet="", score=1.0),
        "file:///n/x.md", "file:///n",
    )
    symbol = convert.symbol_of(hit)
    assert symbol.name == "X" and symbol.container_name == "x.md"
    assert symbol.location.range.end.line == 5
