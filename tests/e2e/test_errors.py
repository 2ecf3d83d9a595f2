"""Bad requests get JSON-RPC errors with a message, and the daemon keeps answering."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams
from tests.support.lsp_client import LspSession


@pytest.mark.parametrize(
    ("params", "names"),
    [
        ({"query": 5}, "query"),
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x", "limit": 201}, "limit"),
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"query": "x", "filters": {"tags": "rust"}}, "filters.tags"),
        ({"query": "x" * 5000}, "query"),
        ({}, "query"),
        (["positional"], "params"),
    ],
)
def test_invalid_search_params_get_invalid_params(shared: LspSession, params: object, names: str) -> None:
    with pytest.raises(JsonRpcInvalidParams) as caught:
        shared.raw_request("kb/search", params)
    assert names in str(caught.value)
    assert shared.paths_found("sourdough starter", limit=1) == ["cooking/sourdough.md"]


def test_uri_outside_every_root_is_refused(shared: LspSession, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\nnot for the index\n", encoding="utf-8")
    with pytest.raises(JsonRpcInvalidParams) as caught:
        shared.request("kb/related", {"uri": outside.as_uri()})
    assert "outside" in str(caught.value)
    with pytest.raises(JsonRpcInvalidParams):
        shared.request("kb/reindex", {"uris": [outside.as_uri()]})
    with pytest.raises(JsonRpcInvalidParams):
        shared.request("kb/related", {"uri": "https://example.com/a.md"})
    assert shared.status().roots[0].files == 7


def test_malformed_standard_request_gets_invalid_params(shared: LspSession, module_workspace: Path) -> None:
    uri = (module_workspace / "rust" / "borrowing.md").as_uri()
    with pytest.raises(JsonRpcInvalidParams):
        shared.raw_request("textDocument/hover", {"textDocument": {"uri": uri}})
    assert shared.status().state == "ready"


def test_hover_outside_the_roots_is_empty(shared: LspSession, tmp_path: Path) -> None:
    assert shared.raw_request(
        "textDocument/hover",
        {"textDocument": {"uri": (tmp_path / "x.md").as_uri()}, "position": {"line": 0, "character": 0}},
    ) is None


def test_invalid_initialization_options_fall_back_to_defaults(workspace: Path, tmp_path: Path) -> None:
    session = LspSession([workspace], tmp_path, init_options={"search": {"limit": "many"}})
    try:
        session.wait_ready()
        shown = [p for m, p in session.notifications if m == "window/showMessage"]
        assert any("limit" in message for message in shown), shown
        assert len(session.search("the", mode="lexical").hits) <= 10
        assert session.paths_found("sourdough starter", limit=1) == ["cooking/sourdough.md"]
    finally:
        session.close()


def test_initialization_options_override_config(workspace: Path, tmp_path: Path) -> None:
    session = LspSession([workspace], tmp_path, init_options={"search": {"limit": 2, "mode": "lexical"}})
    try:
        session.wait_ready()
        result = session.search("flour water dough bread")
        assert len(result.hits) == 2
        assert all(hit.signals.semantic is None for hit in result.hits)
    finally:
        session.close()


def test_empty_array_initialization_options_are_no_options(workspace: Path, tmp_path: Path) -> None:
    """Neovim sends an empty Lua table as `[]`: that means "no options", not a user error."""
    session = LspSession([workspace], tmp_path, init_options=[])
    try:
        session.wait_ready()
        shown = [p for m, p in session.notifications if m == "window/showMessage"]
        assert not any("initializationOptions" in str(message) for message in shown), shown
        assert session.paths_found("sourdough starter", limit=1) == ["cooking/sourdough.md"]
    finally:
        session.close()
