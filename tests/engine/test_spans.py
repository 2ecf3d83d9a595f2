"""Where links and tags are written, as the index keeps them (`link_spans`, `tag_spans`): found
as the editor finds links, outside CommonMark code, kept with the note's chunks in one
transaction, and filled in by the migration's re-read of an older store without re-embedding."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kbls.engine import Engine
from kbls.indexing.parse import parse_note
from kbls.storage.connection import SQLITE
from kbls.storage.records import Span
from kbls.storage.schema import SCHEMA_VERSION
from kbls.storage.store import STORE_FILE

NOTE = """---
title: Café notes
tags: [Alpha, "beta/x"]
aliases:
  - cn
---
# Café notes

See [[Other Note#Sec|lbl]], [x](<sub dir/été.md#top>) and `[[not a link]]` #inline/tag.

```
[[fenced]] #nope
```

    [[indented code]]

- 😀 [[Listed]] #t2 [y](../../outside.md) [z](#local)
"""


def test_links_and_tags_are_found_with_their_positions_outside_code() -> None:
    spans = parse_note("a/b.md", NOTE).spans
    found = [(s.kind, s.target, s.key, s.heading, s.label, s.span.line) for s in spans.links]
    assert found == [
        ("wiki", "Other Note", "other note", "Sec", "lbl", 8),
        ("path", "sub dir/été.md", "a/sub dir/été.md", "top", "x", 8),
        ("wiki", "Listed", "listed", None, None, 16),
        ("path", "../../outside.md", None, None, "y", 16),
        ("path", "", "", "local", "z", 16),
    ]
    line = NOTE.split("\n")[16]
    listed = spans.links[2].span
    assert line[listed.start : listed.end] == "[[Listed]]"
    assert listed.columns("utf-16") == (listed.start + 1, listed.end + 1)  # 😀 is two UTF-16 units
    assert listed.columns("utf-8") == (listed.start + 3, listed.end + 3)  # and four UTF-8 bytes
    tags = [(t.tag, t.written, t.front_matter, t.span.line) for t in spans.tags]
    assert tags == [("alpha", "Alpha", True, 2), ("beta/x", "beta/x", True, 2), ("inline/tag", "inline/tag", False, 8),
                    ("t2", "t2", False, 16)]
    alpha = spans.tags[0].span
    assert NOTE.split("\n")[2][alpha.start : alpha.end] == "Alpha"
    inline = spans.tags[2].span
    assert NOTE.split("\n")[8][inline.start : inline.end] == "#inline/tag"


def test_block_list_front_matter_tags_have_positions() -> None:
    spans = parse_note("c.md", "---\ntags:\n  - one\n  - '#Two'\n---\nbody\n").spans
    assert [(t.tag, t.span) for t in spans.tags] == [("one", Span(2, 4, 7, 4, 7, 4, 7)), ("two", Span(3, 6, 9, 6, 9, 6, 9))]


def test_the_store_keeps_them_per_note_and_replaces_them_on_save(
    root: Path, note: Callable[[str, str], Path], make_engine: Callable[..., Engine],
) -> None:
    note("a/b.md", NOTE)
    note("Other Note.md", "# Other Note\n\n## Sec\n\ntext #inline/tag/deeper\n")
    engine = make_engine(root)
    engine.index()
    to_other = engine.store.links_to(["other note"])
    assert [(s.path, s.link.span.line, s.link.label) for s in to_other] == [("a/b.md", 8, "lbl")]
    assert [s.path for s in engine.store.tag_uses("inline/tag")] == ["Other Note.md", "a/b.md"]
    assert [s.path for s in engine.store.tag_uses("inline/tag", nested=False)] == ["a/b.md"]
    assert len(engine.store.links_of("a/b.md")) == 5

    note("a/b.md", "# Café notes\n\nnow only [[Listed]]\n")
    engine.index([root / "a/b.md"])
    assert engine.store.links_to(["other note"]) == []
    assert [s.link.target for s in engine.store.links_of("a/b.md")] == ["Listed"]
    (root / "a/b.md").unlink()
    engine.index()
    assert engine.store.links_of("a/b.md") == [] and engine.store.links_to(["listed"]) == []
    assert [s.path for s in engine.store.tag_uses("inline")] == ["Other Note.md"]


def test_a_version_2_store_gets_its_spans_by_a_reread_that_embeds_nothing(
    root: Path, note: Callable[[str, str], Path], make_engine: Callable[..., Engine], tmp_path: Path,
) -> None:
    note("alpha.md", "# Alpha\n\nsee [[Beta]] #topic\n")
    note("beta.md", "# Beta\n\nThe other half of the story.\n")
    store_dir = tmp_path / "v2"
    make_engine(root, store_dir=store_dir).index()
    conn = SQLITE.connect(str(store_dir / STORE_FILE))
    conn.execute("DROP TABLE link_spans")
    conn.execute("DROP TABLE tag_spans")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()

    migrated = make_engine(root, store_dir=store_dir)
    assert migrated.notice is None
    meta = dict(migrated.store.conn.execute("SELECT key, value FROM meta"))
    assert meta["schema_version"] == str(SCHEMA_VERSION) and "chunking" not in meta
    assert migrated.store.links_to(["beta"]) == []  # not read yet
    report = migrated.index()
    assert report.embedded == 0 and report.changed == 2
    assert [s.path for s in migrated.store.links_to(["beta"])] == ["alpha.md"]
    assert [s.path for s in migrated.store.tag_uses("topic")] == ["alpha.md"]
