"""`kbls serve` over stdio: capabilities, progress, kb/search, kb/related, hover, workspace/symbol."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types
from tests.support.corpus import store_of
from tests.support.lsp_client import LspSession, plain


def test_request_before_the_model_is_ready_is_answered(shared_session: LspSession) -> None:
    # The first request of the module, sent right after initialize: the model is still loading;
    # the answer must come anyway.
    result = shared_session.search("who owns a value after a move")
    assert result.index.state in ("loading", "indexing", "ready")
    assert isinstance(result.hits, list)


def test_initialize_announces_capabilities(shared_session: LspSession) -> None:
    session = shared_session
    caps = session.initialize_result.capabilities
    assert caps.hover_provider
    assert caps.workspace_symbol_provider
    assert isinstance(caps.text_document_sync, types.TextDocumentSyncOptions) and caps.text_document_sync.save
    folders = caps.workspace.workspace_folders if caps.workspace else None
    assert folders is not None and folders.supported and folders.change_notifications
    info = session.initialize_result.server_info
    assert info is not None and info.name == "kbls"


def test_initial_scan_reports_progress_from_begin_to_end(shared: LspSession) -> None:
    session = shared
    session.wait_for(lambda: any(kind == "end" for kind, _ in session.progress), what="progress end")
    kinds = [kind for kind, _ in session.progress]
    assert kinds[0] == "create"
    assert kinds[1] == "begin"
    assert kinds[-1] == "end"
    reports = [value for kind, value in session.progress if kind == "report"]
    assert reports and reports[-1]["percentage"] == 100
    # files while every note is written, then chunks while the vectors follow
    assert any(r["message"].endswith("files") for r in reports), reports
    assert reports[-1]["message"] == "embedding: 0 chunks left" or reports[-1]["message"].endswith("files"), reports


def test_index_status_notifications_end_ready(shared: LspSession) -> None:
    states = [s["state"] for s in shared.statuses()]
    assert states[0] == "loading"
    assert "indexing" in states
    shared.wait_for(lambda: shared.statuses()[-1]["state"] == "ready", what="a ready kb/indexStatus")
    last = shared.statuses()[-1]
    assert last["files"] == 7 and last["chunks"] > 0 and last["pending"] == 0


def test_search_finds_the_expected_note(shared: LspSession) -> None:
    result = shared.search("only one mutable reference to a piece of data", limit=3)
    assert result.index.state == "ready"
    assert result.hits[0].path == "rust/borrowing.md"
    hit = result.hits[0]
    assert hit.uri.endswith("/rust/borrowing.md") and hit.uri.startswith("file://")
    assert hit.range.start.line <= 10 < hit.range.end.line
    assert hit.signals.semantic is not None
    assert result.took_ms >= 0


def test_search_query_syntax_filters_by_path(shared: LspSession) -> None:
    result = shared.search("path:cooking/** bread dough")
    assert result.hits
    assert all(hit.path.startswith("cooking/") for hit in result.hits)


def test_search_filters_param_and_group_by_file(shared: LspSession) -> None:
    result = shared.search("ownership", filters={"tags": ["rust"]}, groupByFile=True)
    paths = [hit.path for hit in result.hits]
    assert paths and len(paths) == len(set(paths))
    assert set(paths) <= {"rust/ownership.md", "rust/borrowing.md"}


def test_search_explains_each_hit_only_when_asked(shared: LspSession) -> None:
    """`explain`: each signal's score and weight, in the wire's camelCase, adding up to the score."""
    raw = shared.request("kb/search", {"query": "ownership", "explain": True, "groupByFile": True})
    first = raw["hits"][0]["explain"]
    assert {"semantic", "semanticWeight", "lexical", "lexicalWeight", "cosine", "coverage", "bm25Share", "sections"} <= set(first)
    for hit in raw["hits"]:
        e = hit["explain"]
        made = e["semantic"] * e["semanticWeight"] + e["lexical"] * e["lexicalWeight"] + e["sections"]
        assert abs(made - hit["score"]) < 2e-3, hit
    assert all(hit.explain is None for hit in shared.search("ownership").hits)


def test_related_never_lists_the_note_itself(shared: LspSession, module_workspace: Path) -> None:
    uri = (module_workspace / "rust" / "borrowing.md").as_uri()
    result = shared.request("kb/related", {"uri": uri, "position": {"line": 10, "character": 0}})
    paths = [hit["path"] for hit in result["hits"]]
    assert "rust/ownership.md" in paths
    assert "rust/borrowing.md" not in paths
    assert all(hit["reasons"] for hit in result["hits"])
    assert result["index"]["state"] == "ready"


def test_hover_lists_related_notes_as_markdown_links(shared: LspSession, module_workspace: Path) -> None:
    uri = (module_workspace / "rust" / "borrowing.md").as_uri()
    hover = shared.hover(uri, 10)
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    text = hover.contents.value
    assert (module_workspace / "rust" / "ownership.md").as_uri() + "#L" in text
    assert "rust/borrowing.md" not in text  # not the note itself
    assert "](file://" in text and " — " in text


def test_workspace_symbol_answers_with_hits(shared: LspSession) -> None:
    params = types.WorkspaceSymbolParams(query="wild yeast starter")
    symbols = shared._run(shared.client.workspace_symbol_async(params))
    assert symbols
    assert symbols[0].location.uri.endswith("/cooking/sourdough.md")
    assert symbols[0].kind == types.SymbolKind.String
    assert "Sourdough" in symbols[0].name


def test_status_reports_roots_store_and_model(shared: LspSession, module_workspace: Path) -> None:
    status = shared.status()
    assert status.state == "ready" and status.queue == 0
    assert status.dimension == 384 and "MiniLM" in status.model
    (root,) = status.roots
    assert root.uri == module_workspace.as_uri()
    assert root.files == 7 and root.chunks > 0
    assert root.store == str(store_of(module_workspace))
    assert root.store_bytes > 0
    assert root.sqlite.version and root.sqlite.vec
    assert status.embedded_since_start == root.chunks


def test_reindex_reports_progress_and_reuses_vectors(shared: LspSession) -> None:
    before = shared.status()
    ends = sum(1 for kind, _ in shared.progress if kind == "end")
    queued = shared.request("kb/reindex", {"force": True})
    assert queued["queued"] == 7
    shared.wait_for(lambda: sum(1 for kind, _ in shared.progress if kind == "end") > ends, what="reindex progress")
    after = shared.wait_ready()
    assert after.embedded_since_start == before.embedded_since_start
    assert after.reused_since_start > before.reused_since_start


def test_log_messages_reach_the_client(shared: LspSession) -> None:
    messages = [p for m, p in shared.notifications if m == "window/logMessage"]
    assert any("chunks embedded" in m for m in messages)
    assert plain(None) is None


def test_tcp_transport_answers(module_workspace: Path, tmp_path: Path) -> None:
    import asyncio
    import os
    import socket
    import subprocess
    import sys

    from pygls.lsp.client import LanguageClient

    with socket.socket() as probe:  # a free loopback port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    server = subprocess.Popen(
        [sys.executable, "-m", "kbls", "serve", "--tcp", f"127.0.0.1:{port}", "--log-file", str(tmp_path / "tcp.log")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )

    async def talk() -> Any:
        client = LanguageClient("kbls-e2e-tcp", "0")
        for _ in range(100):  # the server needs a moment to listen
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.1)
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[types.WorkspaceFolder(uri=module_workspace.as_uri(), name="notes")],
            )
        )
        client.initialized(types.InitializedParams())
        for _ in range(300):  # roots open on the daemon's worker, right after initialized
            status = await asyncio.wait_for(client.protocol.send_request_async("kb/status", {}), 30)
            if status.roots:
                break
            await asyncio.sleep(0.05)
        await client.shutdown_async(None)
        client.exit(None)
        return status

    try:
        status = asyncio.run(asyncio.wait_for(talk(), 60))
        assert status.version and status.roots[0].uri == module_workspace.as_uri()
    finally:
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
