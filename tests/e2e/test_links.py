"""Links over LSP with the real `kbls serve` and model: completion after `[[` and `](`, definition,
documentLink, on two roots that write wiki links in two styles (`[[Title]]`, `[[path|Title]]`).

Documents are sent with didOpen/didChange and never saved: completion reads the editor's text.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types
from tests.support.corpus import write_config
from tests.support.link_corpus import SLEEPLESS, write_link_workspace
from tests.support.lsp_client import LspSession, ready_session

TODAY = "journal/today.md"
TWO_SECTIONS = "journal/diary.md"
ALLOTMENT = (
    "Sowed seeds in small pots on the windowsill; once the frost is over the young plants go into the "
    "beds by the fence, staked and watered at the roots."
)
#: a file name as macOS stores it (decomposed: e + U+0301), linked as keyboards type it (é).
CAFE_NFD, CAFE_NFC = "Cafe\u0301", "Caf\u00e9"
#: a root of names links found hard: a space, a decomposed accent, `_` in a folder and a look-alike.
NAMED = {
    "my notes/a b.md": "# Spaced\n\nA note whose path holds a space.\n",
    f"{CAFE_NFD}.md": "# Coffee house\n\nEspresso and croissants at the corner.\n",
    "a_b/c.md": "# Underscore folder\n\nThe note a folder link names.\n",
    "axb/c.md": "# Look-alike folder\n\nAn x where the underscore was.\n",
    "hub.md": f'# Hub\n[spaced](<my notes/a b.md> "Spaced note") and [[{CAFE_NFC}]]\n[[a_b/c]] and [[a b.md]]\n',
}


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("links")
    made = {}
    for style in ("title", "path"):
        root = write_link_workspace(base / style, style)
        write_config(root)
        (root / "journal").mkdir()
        (root / TODAY).write_text("# Today\n", encoding="utf-8")
        made[style] = root
    # A third root for kb/related: a diary of two long sections, one per topic.
    diary = write_link_workspace(base / "diary", "title")
    write_config(diary)
    night, allotment = " ".join([SLEEPLESS] * 4), " ".join([ALLOTMENT] * 4)
    (diary / TWO_SECTIONS).parent.mkdir()
    (diary / TWO_SECTIONS).write_text(
        f"# Diary\n\n## Night\n\n{night}\n\n## Allotment\n\n{allotment}\n", encoding="utf-8"
    )
    made["diary"] = diary
    names = base / "names"
    for rel, text in NAMED.items():
        (names / rel).parent.mkdir(parents=True, exist_ok=True)
        (names / rel).write_text(text, encoding="utf-8")
    write_config(names)
    made["names"] = names
    return made


@pytest.fixture(scope="module")
def session(roots: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    yield from ready_session(list(roots.values()), tmp_path_factory.mktemp("links-logs"))


def _edit(item: types.CompletionItem) -> str:
    assert isinstance(item.text_edit, types.TextEdit)
    return item.text_edit.new_text


def test_the_link_features_are_advertised(session: LspSession) -> None:
    caps = session.initialize_result.capabilities
    assert caps.completion_provider is not None
    assert set(caps.completion_provider.trigger_characters or []) == {"[", "(", "#"}
    assert caps.definition_provider and caps.document_link_provider is not None
    sync = caps.text_document_sync
    assert isinstance(sync, types.TextDocumentSyncOptions)
    assert sync.open_close and sync.change == types.TextDocumentSyncKind.Incremental and sync.save


def test_completion_after_brackets_finds_the_note_by_meaning_and_narrows(
    session: LspSession, roots: dict[str, Path]
) -> None:
    uri = session.open_document(roots["title"] / TODAY, f"# Today\n\n{SLEEPLESS}[")
    # A lone `[` gets nothing (the server only warms the paragraph's notes up for a `[[`).
    assert session.complete(uri, 2, len(SLEEPLESS) + 1) is None
    session.type_text(uri, 2, len(SLEEPLESS) + 1, "[", 2)
    column = len(SLEEPLESS) + 2
    found = session.complete(uri, 2, column)
    assert found is not None and found.is_incomplete and found.items
    first = found.items[0]
    assert first.label == "Sleep hygiene" and _edit(first) == "Sleep hygiene]]"
    assert first.detail and "meaning" in first.detail and "health/sleep.md" in first.detail
    assert isinstance(first.documentation, types.MarkupContent) and "Sleep hygiene" in first.documentation.value
    assert "journal/today.md" not in [item.detail for item in found.items]
    session.type_text(uri, 2, column, "Gro", 3)
    # The change and the request leave in that order: the answer reads the new text.
    narrowed = session.complete(uri, 2, column + 3)
    assert narrowed is not None and [item.label for item in narrowed.items] == ["Growing tomatoes"]
    assert "title match" in (narrowed.items[0].detail or "")


def test_wiki_links_follow_the_style_of_each_root(session: LspSession, roots: dict[str, Path]) -> None:
    uri = session.open_document(roots["path"] / TODAY, f"# Today\n\n{SLEEPLESS}[[]]")
    found = session.complete(uri, 2, len(SLEEPLESS) + 2)
    assert found is not None and found.items
    first = found.items[0]
    assert _edit(first) == "health/sleep|Sleep hygiene]]"
    assert isinstance(first.text_edit, types.TextEdit)
    # The closing brackets the editor added are replaced, not doubled.
    assert (first.text_edit.range.start.character, first.text_edit.range.end.character) == (
        len(SLEEPLESS) + 2, len(SLEEPLESS) + 4
    )


def test_markdown_link_completion_inserts_a_relative_path_and_fills_an_empty_label(
    session: LspSession, roots: dict[str, Path]
) -> None:
    text = f"# Today\n\n{SLEEPLESS}[]("
    uri = session.open_document(roots["title"] / "journal/markdown.md", text)
    found = session.complete(uri, 2, len(SLEEPLESS) + 3)
    assert found is not None and found.items
    first = found.items[0]
    assert _edit(first) == "../health/sleep.md)"
    assert [e.new_text for e in first.additional_text_edits or []] == ["Sleep hygiene"]


def test_definition_and_document_links_resolve_wiki_and_relative_links(
    session: LspSession, roots: dict[str, Path]
) -> None:
    root = roots["title"]
    routine = (root / "health/sleep.md").read_text().split("\n").index("## Evening routine")
    text = (
        "# Links\n"
        "[[Sleep hygiene]] and [[sleep#Evening routine]] and [[Index funds|money]]\n"
        "[bed](../health/sleep.md#evening-routine) [secret](../../../../etc/passwd) [[Nowhere]]\n"
        "[up](../../title/health/sleep.md) [abs](/garden/tomatoes.md)\n"
    )
    uri = session.open_document(root / "journal/links.md", text)
    sleep = (root / "health/sleep.md").as_uri()
    first = session.definition(uri, 1, 4)
    assert [(loc.uri, loc.range.start.line) for loc in first] == [(sleep, 0)]
    heading = session.definition(uri, 1, 26)
    assert [(loc.uri, loc.range.start.line) for loc in heading] == [(sleep, routine)]
    relative = session.definition(uri, 2, 3)
    assert [(loc.uri, loc.range.start.line) for loc in relative] == [(sleep, routine)]
    assert session.definition(uri, 2, 50) == []  # outside the roots
    assert session.definition(uri, 0, 3) == []  # not a link
    links = session.document_links(uri)
    targets = sorted((link.range.start.line, link.range.start.character, link.target) for link in links)
    assert targets == [
        (1, 0, sleep), (1, 22, f"{sleep}#L{routine + 1}"), (1, 52, (root / "finance/index-funds.md").as_uri()),
        (2, 0, f"{sleep}#L{routine + 1}"), (3, 34, (root / "garden/tomatoes.md").as_uri()),
    ]
    # "../../title/health/sleep.md" leaves the root (through its parent) even though it comes back:
    # a markdown link names a path inside the root or nothing.


def test_documents_not_open_or_outside_the_roots_get_no_answer(
    session: LspSession, roots: dict[str, Path], tmp_path: Path
) -> None:
    unopened = (roots["title"] / "garden/tomatoes.md").as_uri()
    assert session.complete(unopened, 0, 2) is None
    outside = tmp_path / "elsewhere.md"
    outside.write_text("[[", encoding="utf-8")
    uri = session.open_document(outside, "[[\n[[Sleep hygiene]]\n")
    assert session.complete(uri, 0, 2) is None
    assert session.definition(uri, 1, 4) == []
    assert session.document_links(uri) == []
    mine = session.open_document(roots["title"] / "journal/edge.md", "text [[\n")
    assert session.complete(mine, 1, 0) is None  # past the last line: not the link above
    assert session.complete(mine, 99, 99) is None and session.definition(mine, 99, 0) == []
    with pytest.raises(Exception, match=r"(?i)invalid params"):
        session.raw_request("textDocument/completion", {"textDocument": {"uri": mine}, "position": "here"})
    assert session.alive()


def test_related_follows_the_section_under_the_cursor(session: LspSession, roots: dict[str, Path]) -> None:
    """kb/related with a position answers for that line's section (the panel that follows the cursor)."""
    root = roots["diary"]
    lines = (root / TWO_SECTIONS).read_text().split("\n")
    uri = (root / TWO_SECTIONS).as_uri()

    def first_at(line: int) -> str:
        result = session.request("kb/related", {"uri": uri, "position": {"line": line, "character": 0}, "limit": 3})
        return str(result["hits"][0]["path"])

    assert first_at(lines.index("## Night") + 2) == "health/sleep.md"
    assert first_at(lines.index("## Allotment") + 2) == "garden/tomatoes.md"
    assert first_at(lines.index("## Allotment")) == "garden/tomatoes.md"  # the heading opens that section


def test_random_link_soup_never_fails_and_never_leaves_the_roots(session: LspSession, roots: dict[str, Path]) -> None:
    """Documents of random brackets, paths and wide characters, asked at random positions (some
    past the line's end): every answer is a result, and every target lies inside a root."""
    rng = random.Random(1313)
    pieces = ["[", "[[", "]]", "](", "(", ")", "]", "#", "|", "`", "```", "😋", "é", "../", "/", "sleep", "Index funds",
              "health/sleep.md", "%20", " ", "\t", "\r", "..", "~", "<", ">", "\\"]
    inside = tuple(root.as_uri() + "/" for root in roots.values())
    for version in range(1, 121):
        lines = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(rng.randint(1, 6))]
        uri = session.open_document(roots["title"] / "journal/soup.md", "\n".join(lines), version)
        line = rng.randint(0, len(lines))
        character = rng.randint(0, 40)
        found = session.complete(uri, line, character)
        assert found is None or all(isinstance(item.text_edit, types.TextEdit) for item in found.items)
        for location in session.definition(uri, line, character):
            assert location.uri.startswith(inside), location.uri
        for link in session.document_links(uri):
            assert link.target is not None and link.target.startswith(inside), link.target
    assert session.alive()


def test_lines_are_counted_as_lsp_counts_them_past_a_form_feed_or_line_separator(
    session: LspSession, roots: dict[str, Path]
) -> None:
    """pygls's own split also ends lines at a form feed or U+2028; editors do not (kbls.lsp.documents)."""
    root = roots["title"]
    sleep = (root / "health/sleep.md").as_uri()
    uri = session.open_document(root / "journal/breaks.md", "# Page\x0cbreak \u2028 here\n[[Sleep hygiene]]\n")
    assert [(link.range.start.line, link.range.start.character, link.target) for link in session.document_links(uri)] == [
        (1, 0, sleep)
    ]
    session.type_text(uri, 1, 0, "see ", version=2)  # an incremental edit on the editor's line 1
    assert [(link.range.start.line, link.range.start.character) for link in session.document_links(uri)] == [(1, 4)]
    assert [loc.uri for loc in session.definition(uri, 1, 8)] == [sleep]


def test_angle_bracket_paths_extensions_and_unicode_forms_link_everywhere(
    session: LspSession, roots: dict[str, Path]
) -> None:
    """`[x](<a b.md> "title")`, `[[Café]]` typed composed for a file named decomposed, `[[a_b/c]]`
    beside `axb/c.md`, `[[a b.md]]`: documentLink, definition and the link index behind kb/related
    and the hover name the same notes."""
    root = roots["names"]
    hub = NAMED["hub.md"].split("\n")
    uri = session.open_document(root / "hub.md", NAMED["hub.md"])
    spaced, cafe = (root / "my notes/a b.md").as_uri(), (root / f"{CAFE_NFD}.md").as_uri()
    links = sorted((link.range.start.line, link.range.start.character, link.target) for link in session.document_links(uri))
    assert links == [
        (1, 0, spaced), (1, hub[1].index("[["), cafe), (2, 0, (root / "a_b/c.md").as_uri()), (2, hub[2].index("[[a b"), spaced),
    ]
    assert [loc.uri for loc in session.definition(uri, 1, 12)] == [spaced]
    assert [loc.uri for loc in session.definition(uri, 1, hub[1].index("[[") + 3)] == [cafe]

    def link_reasons(rel: str) -> dict[str, list[str]]:
        params = {"uri": (root / rel).as_uri(), "limit": 20}
        hits = session.request("kb/related", params)["hits"]
        return {h["path"]: [r for r in h["reasons"] if "link" in r] for h in hits if any("link" in r for r in h["reasons"])}

    assert link_reasons("hub.md") == {
        "my notes/a b.md": ["linked from here"], f"{CAFE_NFD}.md": ["linked from here"], "a_b/c.md": ["linked from here"],
    }
    assert link_reasons(f"{CAFE_NFD}.md") == {"hub.md": ["links here"]}
    assert "hub.md" not in link_reasons("axb/c.md")
    hover = session.raw_request(
        "textDocument/hover", {"textDocument": {"uri": spaced}, "position": {"line": 0, "character": 0}}
    )
    assert hover is not None and "links here" in hover["contents"]["value"]


def test_a_path_typed_in_angle_brackets_is_completed_as_written_there(
    session: LspSession, roots: dict[str, Path]
) -> None:
    line = "Also [](<my no"
    uri = session.open_document(roots["names"] / "draft.md", f"# Draft\n{line}\n")
    found = session.complete(uri, 1, len(line))
    assert found is not None and found.items
    first = found.items[0]
    assert _edit(first) == "my notes/a b.md>)"
    assert [e.new_text for e in first.additional_text_edits or []] == ["Spaced"]
