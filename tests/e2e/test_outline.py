"""`textDocument/documentSymbol` and `textDocument/foldingRange` over LSP with the real `kbls serve`,
on an open note with front matter, nested and setext headings, a `#` line inside a fence, lists,
a quote and an HTML comment, in a folder with a space and an accent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from tests.support.corpus import write_config
from tests.support.lsp_client import LspSession

NOTE = """\
---
title: Été plans
tags: [travel]
---
# Été plans

Intro.

## Trains

- Paris
- Lyon
  - the old town
  - the river

```bash
# not a heading
echo hi
```

Where to sleep
--------------

> a quote
> over two lines

### Hostels 🛏

<!--
a comment
-->
# Afterwards
"""
HIERARCHICAL = types.TextDocumentClientCapabilities(
    document_symbol=types.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True)
)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = tmp_path_factory.mktemp("outline") / "my notes"
    (made / "voyages é").mkdir(parents=True)
    (made / "voyages é" / "plans.md").write_text("# placeholder\n", encoding="utf-8")
    write_config(made)
    return made


@pytest.fixture(scope="module")
def session(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    with LspSession([root], tmp_path_factory.mktemp("outline-logs"), text_document=HIERARCHICAL) as s:
        yield s


def _open(session: LspSession, path: Path, text: str) -> str:
    item = types.TextDocumentItem(uri=path.as_uri(), language_id="markdown", version=1, text=text)
    session.notify(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=item))
    return path.as_uri()


def _tree(symbols: list[types.DocumentSymbol]) -> list[Any]:
    return [
        (s.name, s.kind, s.range.start.line, s.range.end.line, s.selection_range.start.line, _tree(list(s.children or [])))
        for s in symbols
    ]


def test_outline_and_folding_are_advertised(session: LspSession) -> None:
    caps = session.initialize_result.capabilities
    assert caps.document_symbol_provider and caps.folding_range_provider


def test_document_symbols_nest_headings_over_their_sections_with_the_front_matter_first(
    session: LspSession, root: Path
) -> None:
    uri = _open(session, root / "voyages é" / "plans.md", NOTE)
    params = types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri))
    result: Any = session._run(session.client.text_document_document_symbol_async(params))
    string, prop, space = types.SymbolKind.String, types.SymbolKind.Property, types.SymbolKind.Namespace
    assert _tree(result) == [
        ("front matter", space, 0, 3, 0, [("title", prop, 1, 1, 1, []), ("tags", prop, 2, 2, 2, [])]),
        ("Été plans", string, 4, 30, 4, [
            ("Trains", string, 8, 18, 8, []),
            ("Where to sleep", string, 20, 30, 20, [("Hostels 🛏", string, 26, 30, 26, [])]),
        ]),
        ("Afterwards", string, 31, 31, 31, []),
    ]
    # the end of a range is in UTF-16 units: 🛏 counts 2
    hostels = result[1].children[1].children[0]
    assert hostels.selection_range.end.character == len("### Hostels ") + 2


def test_folding_ranges_cover_sections_code_front_matter_lists_quotes_and_comments(
    session: LspSession, root: Path
) -> None:
    uri = _open(session, root / "voyages é" / "plans.md", NOTE)
    params = types.FoldingRangeParams(text_document=types.TextDocumentIdentifier(uri))
    result: Any = session._run(session.client.text_document_folding_range_async(params))
    region, imports, comment = types.FoldingRangeKind.Region, types.FoldingRangeKind.Imports, types.FoldingRangeKind.Comment
    assert [(r.start_line, r.end_line, r.kind) for r in result] == [
        (0, 3, imports),  # front matter
        (4, 30, region),  # # Été plans
        (8, 18, region),  # ## Trains
        (10, 13, None),  # the list
        (11, 13, None),  # its item with a nested list
        (12, 13, None),  # the nested list
        (15, 18, None),  # the fence
        (20, 30, region),  # Where to sleep (setext)
        (23, 24, None),  # the quote
        (26, 30, region),  # ### Hostels
        (28, 30, comment),
    ]


def test_a_note_the_client_has_not_opened_gets_no_outline(session: LspSession, root: Path) -> None:
    params = types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier((root / "never.md").as_uri()))
    assert session._run(session.client.text_document_document_symbol_async(params)) is None


def test_after_each_change_the_outline_is_the_new_texts(session: LspSession, root: Path) -> None:
    """Asked once, the symbols of each later version are made once its links are checked (ahead
    of the editor's next request): they must be the new text's, never the last version's."""
    uri = _open(session, root / "voyages é" / "changing.md", "# First\n\n## Part\n")
    params = types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri))

    def names() -> list[Any]:
        result: Any = session._run(session.client.text_document_document_symbol_async(params))
        return [(s.name, [c.name for c in s.children or []]) for s in result]

    assert names() == [("First", ["Part"])]
    for version, (line, text, expected) in enumerate([
        (2, "## Added\n\n", [("First", ["Added", "Part"])]),
        (0, "# Zero\n\n", [("Zero", []), ("First", ["Added", "Part"])]),
    ], start=2):
        session.type_text(uri, line, 0, text, version)
        session.wait_for(
            lambda v=version: any(
                m == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS and p["uri"] == uri and p.get("version") == v
                for m, p in list(session.notifications)
            ),
            timeout=30, what=f"the link check of version {version}",
        )
        assert names() == expected
