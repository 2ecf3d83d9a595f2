"""Parsing notes: frontmatter, tags, links, headings, rst and plain text."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from kbls.engine import Engine
from kbls.indexing.parse import parse_note


def _md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def test_frontmatter_title_tags_aliases_and_type() -> None:
    note = parse_note("a.md", _md("""
        ---
        title: Ownership in Rust
        tags: [rust, Memory]
        aliases: [ownership, owning]
        type: concept
        ---
        Body text.
        """))
    assert note.title == "Ownership in Rust"
    assert note.tags == ["rust", "memory"]
    assert note.aliases == ["ownership", "owning"]
    assert note.note_type == "concept"
    assert note.warning is None
    assert note.sections[0].blocks[0].start_line == 6  # line numbers count the frontmatter


def test_tags_as_a_comma_separated_string() -> None:
    note = parse_note("a.md", '---\ntags: "rust, #async"\n---\nx\n')
    assert note.tags == ["rust", "async"]


def test_inline_tags_but_not_headings_code_or_anchors() -> None:
    note = parse_note("a.md", _md("""
        # Heading
        Some #idea and #project/alpha here, not a#b nor [x](#anchor).
        `#include` is code.

        ```c
        #define NOT_A_TAG 1
        ```
        """))
    assert note.tags == ["idea", "project/alpha"]


def test_an_alias_written_as_one_string_keeps_its_spaces_and_tags_split_on_them() -> None:
    """Obsidian writes `aliases: Sleep hygiene` for one alias of two words; `tags: a b` is two tags."""
    note = parse_note("a.md", _md("""
        ---
        tags: "#rust memory, ownership"
        aliases: Sleep hygiene, C# tips
        ---
        Body text.
        """))
    assert note.tags == ["rust", "memory", "ownership"]
    assert note.aliases == ["Sleep hygiene", "C# tips"]


def test_wiki_links_with_anchor_and_alias() -> None:
    note = parse_note("dir/a.md", "See [[Borrowing]], [[Moves#Clone|cloning]] and [[ Traits ]].\n")
    assert ("wiki", "Borrowing") in note.links
    assert ("wiki", "Moves") in note.links
    assert ("wiki", "Traits") in note.links


def test_relative_markdown_links_resolve_against_the_note_folder() -> None:
    note = parse_note("rust/borrowing.md", _md("""
        Read [ownership](ownership.md), [setup](../setup/linux.md#apt), [root](/index.md),
        [web](https://example.org/x.md), [mail](mailto:a@b.c) and [escape](../../outside.md).
        """))
    paths = [t for k, t in note.links if k == "path"]
    assert paths == ["rust/ownership.md", "setup/linux.md", "index.md"]


def test_headings_build_the_breadcrumb_below_the_title() -> None:
    note = parse_note("g.md", _md("""
        # Guide
        intro
        ## Setup
        s
        ### Linux
        l
        ## Usage
        u

        Setext heading
        --------------
        t
        """))
    assert note.title == "Guide"
    assert [s.headings for s in note.sections] == [[], ["Setup"], ["Setup", "Linux"], ["Usage"], ["Setext heading"]]


def test_a_hash_inside_a_code_fence_is_not_a_heading() -> None:
    note = parse_note("c.md", "# T\n\n```sh\n# a comment\n```\n")
    assert [s.headings for s in note.sections] == [[]]


def test_title_falls_back_to_the_file_stem() -> None:
    assert parse_note("notes/my-idea.md", "no heading here\n").title == "my-idea"


def test_malformed_frontmatter_is_reported_and_the_body_still_parsed() -> None:
    note = parse_note("bad.md", _md("""
        ---
        title: [unclosed
        tags: rust
        ---
        # Real heading
        The body is still indexed.
        """))
    assert note.warning is not None and "malformed YAML" in note.warning
    text = "\n".join(b.text for s in note.sections for b in s.blocks)
    assert "The body is still indexed." in text
    assert note.title == "Real heading"


def test_unclosed_frontmatter_is_treated_as_body() -> None:
    note = parse_note("open.md", "---\ntitle: x\nno closing line\n")
    assert note.warning and "no closing" in note.warning
    assert "no closing line" in "\n".join(b.text for s in note.sections for b in s.blocks)


def test_frontmatter_that_is_not_a_mapping_is_reported() -> None:
    note = parse_note("list.md", "---\n- a\n- b\n---\nbody\n")
    assert note.warning and "not a mapping" in note.warning


def test_rst_underlined_titles_become_headings() -> None:
    note = parse_note("meeting.rst", _md("""
        Quarterly planning
        ==================

        Decisions
        ---------

        Migrate the backup server.

        Actions
        -------

        Rotate on-call.
        """))
    assert note.kind == "rst"
    assert note.title == "Quarterly planning"
    assert [s.headings for s in note.sections] == [[], ["Decisions"], ["Actions"]]


def test_plain_text_is_paragraphs_only() -> None:
    note = parse_note("p.txt", "# not a heading\n\nsecond paragraph #notatag\n")
    assert note.kind == "txt"
    assert len(note.sections) == 1 and len(note.sections[0].blocks) == 2
    assert note.tags == []


# CommonMark block structure (issue 10): fences, lists and setext headings as the spec reads them.


def test_an_info_string_line_inside_a_fence_does_not_close_it() -> None:
    note = parse_note("f.md", _md("""
        # Guide
        ```python
        x = 1
        ```python
        # not a heading: still code
        ```

        ## Real heading
        text
        """))
    assert [s.headings for s in note.sections] == [[], ["Real heading"]]
    fence = note.sections[0].blocks[1]
    assert (fence.start_line, fence.end_line) == (1, 5)
    assert "# not a heading" in fence.text
    heading = note.sections[1].blocks[0]
    assert heading.is_heading and (heading.start_line, heading.end_line) == (7, 7)
    assert note.sections[1].blocks[1].start_line == 8


def test_a_list_item_then_dashes_is_a_list_and_a_thematic_break() -> None:
    note = parse_note("l.md", "# T\n\n- item\n---\n\nafter\n")
    assert [s.headings for s in note.sections] == [[]]
    texts = [b.text for b in note.sections[0].blocks]
    assert texts == ["# T", "- item", "after"]
    assert not any(b.is_heading for b in note.sections[0].blocks[1:])


def test_a_multi_line_setext_heading_is_one_heading() -> None:
    note = parse_note("s.md", "# T\n\nSetext spanning\ntwo lines\n---\nbody\n")
    assert [s.headings for s in note.sections] == [[], ["Setext spanning two lines"]]
    heading = note.sections[1].blocks[0]
    assert heading.is_heading and (heading.start_line, heading.end_line) == (2, 4)
    assert note.sections[1].blocks[1].start_line == 5


def test_an_unclosed_fence_runs_to_the_end_of_the_note() -> None:
    note = parse_note("u.md", "# T\n\n~~~~\n# code\n~~~\n## still code\n")
    assert [s.headings for s in note.sections] == [[]]
    assert note.sections[0].blocks[-1].end_line == 5


def test_breadcrumbs_and_ranges_follow_nested_headings_after_code() -> None:
    note = parse_note("b.md", _md("""
        # Book
        ## Ownership
        ```sh
        # comment
        ## another comment
        ```
        ### Moves
        m
        ## Borrowing
        b
        """))
    assert [s.headings for s in note.sections] == [[], ["Ownership"], ["Ownership", "Moves"], ["Borrowing"]]
    assert [(b.start_line, b.end_line) for b in note.sections[1].blocks] == [(1, 1), (2, 5)]
    assert [(b.start_line, b.end_line) for b in note.sections[3].blocks] == [(8, 8), (9, 9)]


def test_heading_text_is_plain_text_and_closing_hashes_are_dropped() -> None:
    note = parse_note("h.md", "# T\n\n## Use `Option` with *care* ##\n\nx\n")
    assert note.sections[1].headings == ["Use Option with care"]


def test_list_items_are_blocks_and_a_fence_inside_an_item_is_code() -> None:
    note = parse_note("i.md", _md("""
        - first #one
        - second
          ```c
          #define NOT_A_TAG [[not-a-link]]
          ```
          after the fence #two [[Linked]]
        """))
    assert [(b.start_line, b.end_line) for b in note.sections[0].blocks] == [(0, 0), (1, 5)]
    assert note.tags == ["one", "two"]
    assert note.links == [("wiki", "Linked")]


def test_indented_code_is_not_read_for_tags() -> None:
    note = parse_note("c.md", "para #yes\n\n    #no in code\n")
    assert note.tags == ["yes"]


def test_headings_inside_a_quote_do_not_start_sections() -> None:
    note = parse_note("q.md", "# T\n\n> # quoted\n> text\n\nafter\n")
    assert [s.headings for s in note.sections] == [[]]
    assert [b.text for b in note.sections[0].blocks] == ["# T", "> # quoted\n> text", "after"]


def test_link_reference_definitions_are_kept_as_text() -> None:
    note = parse_note("r.md", "[docs]: https://example.org/docs\n\n# T\n")
    assert note.sections[0].blocks[0].text == "[docs]: https://example.org/docs"


def test_frontmatter_may_close_with_dots_and_crlf_is_read_as_lf() -> None:
    note = parse_note("d.md", "---\r\ntitle: Dots\r\n...\r\n# Heading\r\nbody\r\n")
    assert note.title == "Dots" and note.warning is None
    assert [s.headings for s in note.sections] == [["Heading"]]
    assert note.sections[0].blocks[-1].start_line == 4


def test_frontmatter_closing_past_2000_lines_is_body() -> None:
    text = "---\n" + "line\n" * 2100 + "---\n# After\n"
    note = parse_note("far.md", text)
    assert note.warning and "no closing" in note.warning
    # The lines are body, so the H1 after them is a section, not the title that opens the note.
    assert note.title == "far" and note.sections[-1].headings == ["After"]


def test_frontmatter_that_yaml_cannot_build_is_ignored_and_the_body_parsed() -> None:
    # PyYAML raises ValueError, AttributeError, KeyError or RecursionError (not YAMLError) for
    # these; the note was skipped whole ("cannot parse: ValueError") instead of its body indexed.
    cases = {
        "date: !!timestamp 2024-02-30": "ValueError",  # untagged, it is text (see below)
        "due: !!timestamp tomorrow": "AttributeError",
        "count: !!int many": "ValueError",
        "done: !!bool maybe": "KeyError",
        "x: " + "[" * 5000: "nested too deeply",
        "- " * 3000 + "x": "nested too deeply",
    }
    for front, reason in cases.items():
        note = parse_note("n.md", f"---\n{front}\n---\n# Real heading\nThe body is still indexed.\n")
        assert note.warning is not None and note.warning.startswith("frontmatter:"), front[:20]
        assert reason in note.warning, (front[:20], note.warning)
        assert note.title == "Real heading"
        assert "The body is still indexed." in "\n".join(b.text for s in note.sections for b in s.blocks)


@pytest.mark.parametrize(
    ("front", "title", "aliases", "tags", "note_type"),
    [
        ("title: 2024-01-05", "2024-01-05", [], [], None),  # a date: the title fell back to the H1
        ("title: No", "No", [], [], None),  # False: the title read "False"
        ("title: on\ntype: 1.10", "on", [], [], "1.10"),  # True; the float 1.1
        ("aliases: [2024-01-05, Yes]", "Real heading", ["2024-01-05", "Yes"], [], None),  # a date alias was dropped
        ("tags: [2024-01-05, off, 0x1F]", "Real heading", [], ["2024-01-05", "off", "0x1f"], None),
        ("title: 1e3\naliases: 007", "1e3", ["007"], [], None),  # 1000.0; the int 7
    ],
)
def test_front_matter_text_is_read_as_the_user_wrote_it(
    front: str, title: str, aliases: list[str], tags: list[str], note_type: str | None
) -> None:
    """YAML 1.1 read `2024-01-05`, `No`, `on`, `1e3` and `007` as dates, booleans and numbers."""
    note = parse_note("n.md", f"---\n{front}\n---\n# Real heading\nbody\n")
    assert note.warning is None, note.warning
    assert (note.title, note.aliases, note.tags, note.note_type) == (title, aliases, tags, note_type)


def test_front_matter_null_and_explicit_tags_still_mean_what_yaml_says() -> None:
    """Null stays null (the title falls back to the H1); an explicit `!!int 5` is built, and an
    impossible date or `!!int abc` written with its tag is still a warning, never a crash."""
    for front in ("title: ~", "title: null", "title:"):
        assert parse_note("n.md", f"---\n{front}\n---\n# Real heading\n").title == "Real heading", front
    assert parse_note("n.md", "---\ntitle: !!int 5\n---\n# H\n").title == "5"
    untagged = parse_note("n.md", "---\ndate: 2024-02-30\n---\n# H\n")
    assert untagged.warning is None and untagged.title == "H"  # text: nothing to build



def test_a_note_of_front_matter_only_gets_one_chunk_of_its_title_and_aliases() -> None:
    """It had no section, so no chunk: no search could find it by title, alias or tag."""
    note = parse_note("gear.md", "---\ntitle: Packing list\naliases: [kit, gear]\ntags: [trip]\n---\n")
    assert [(b.start_line, b.end_line, b.text) for s in note.sections for b in s.blocks] == [
        (0, 4, "Packing list\nkit\ngear")  # the front matter's lines, `---` included
    ]
    assert note.tags == ["trip"]
    for empty in ("---\n---\n", "---\n---\n\n\n", ""):  # nothing to find it by: still no chunk
        assert parse_note("n.md", empty).sections == [], repr(empty)
    with_body = parse_note("n.md", "---\ntitle: T\n---\nA body.\n")
    assert [b.text for s in with_body.sections for b in s.blocks] == ["A body."]


def test_a_note_of_front_matter_only_is_found_by_title_alias_and_tag(
    tmp_path: Path, make_engine: Callable[..., Engine]
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "gear.md").write_text("---\ntitle: Packing list\naliases: [crampons]\ntags: [trip]\n---\n")
    (root / "bread.md").write_text("# Sourdough\n\nFeed the starter and bake the loaf.\n")
    engine = make_engine(root)
    engine.index()
    for query in ("packing list", "crampons", "tag:trip"):
        hits = engine.search(query, mode="lexical" if query != "tag:trip" else "hybrid").hits
        assert [h.path for h in hits][:1] == ["gear.md"], (query, hits)
        assert (hits[0].start_line, hits[0].end_line) == (0, 4)


def test_a_note_without_an_opening_h1_takes_its_title_from_its_file_name() -> None:
    """A vault that names pages by file (SilverBullet, Obsidian): a page tag line and the page's
    opening text come first, its `# …` headings are sections."""
    note = parse_note("Space Lua/Aggregator Pages.md", _md("""
        ---
        tags: glossary
        ---
        #getting-started #guide

        An aggregator page collects items from across your space.

        # The pattern
        Three moving parts.
        """))
    assert note.title == "Aggregator Pages" and note.title_from_name
    assert [s.headings for s in note.sections] == [[], ["The pattern"]]
    assert "getting-started" in note.tags


def test_an_h1_after_page_tags_only_is_still_the_title() -> None:
    note = parse_note("n.md", "#rust #notes\n\n# Ownership\nMoves and borrows.\n")
    assert note.title == "Ownership" and not note.title_from_name


def _body(note_text: str, path: str = "t.md") -> str:
    note = parse_note(path, note_text)
    return "\n".join(b.text for s in note.sections for b in s.blocks)


def test_template_markup_is_out_of_the_indexed_text_and_its_words_stay() -> None:
    text = _md("""
        # Exporters

        {{< tabpane text=true >}}
        {{% tab "Linux/macOS" %}}
        Set the endpoint with {{% param vers %}} and `OTEL_EXPORTER_OTLP_ENDPOINT`.
        {{% /tab %}}
        {{< /tabpane >}}

        {{% config_option name="otel.javaagent.logging" %}} Where the agent logs. {{% /config_option %}}

        A {% include note.html %} Liquid tag and a {{ site.title }} expression.

        ```sh
        curl -O otelcol_{{% param vers %}}_linux_amd64.tar.gz
        helm set image={{ .Values.image }}
        ```
        """)
    body = _body(text)
    for noise in ("tabpane", "text=true", "param vers", "config_option", "include", "site.title", "{{%"):
        assert noise not in body, noise
    for kept in ("Linux/macOS", "Set the endpoint with", "OTEL_EXPORTER_OTLP_ENDPOINT", "otel.javaagent.logging",
                 "Where the agent logs.", "Liquid tag", "otelcol__linux_amd64", "{{ .Values.image }}"):
        assert kept in body, kept


def test_template_markup_keeps_line_ranges() -> None:
    note = parse_note("t.md", "# T\n\n{{< figure\n  src=\"a.png\"\n  caption=\"The flow\" >}}\n\nAfter.\n")
    blocks = [b for s in note.sections for b in s.blocks if not b.is_heading]
    assert [(b.start_line, b.end_line) for b in blocks] == [(2, 4), (6, 6)]
    assert blocks[0].text.strip() == "The flow" and blocks[0].text.count("\n") == 2

