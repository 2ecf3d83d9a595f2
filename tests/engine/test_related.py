"""Related notes with the real model: never the note itself; links and tags give reasons."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbls.engine import Engine
from kbls.errors import OutsideRootError
from kbls.results import Hit
from kbls.retrieval.related import similarity_reason

Note = Callable[[str, str], Path]
MakeEngine = Callable[..., Engine]


def _by_path(hits: list[Hit]) -> dict[str, Hit]:
    return {h.path: h for h in hits}


@pytest.mark.parametrize("rel", ["rust/ownership.md", "rust/borrowing.md", "cooking/pasta.md", "meeting-notes.rst"])
def test_a_note_is_never_related_to_itself(kb: Engine, rel: str) -> None:
    hits = kb.related(kb.root / rel, limit=20)
    assert rel not in [h.path for h in hits]


def test_the_link_graph_appears_in_the_reasons(kb: Engine) -> None:
    """ownership.md links [[Borrowing]]; borrowing.md links (ownership.md)."""
    from_ownership = _by_path(kb.related(kb.root / "rust/ownership.md"))
    assert "linked from here" in from_ownership["rust/borrowing.md"].reasons
    assert "links here" in from_ownership["rust/borrowing.md"].reasons
    from_borrowing = _by_path(kb.related(kb.root / "rust/borrowing.md"))
    assert {"linked from here", "links here"} <= set(from_borrowing["rust/ownership.md"].reasons)


def test_shared_tags_appear_in_the_reasons(kb: Engine) -> None:
    hits = _by_path(kb.related(kb.root / "rust/borrowing.md"))
    assert "shared tags: rust" in hits["rust/ownership.md"].reasons


def test_similar_meaning_ranks_the_sibling_topic_first(kb: Engine) -> None:
    hits = kb.related(kb.root / "rust/lifetimes.md", limit=3)
    assert hits and hits[0].path.startswith("rust/")
    assert any(r.startswith("similar") for r in hits[0].reasons)


def test_a_similarity_reason_names_the_section_without_the_title(root: Path, note: Note, make_engine: MakeEngine) -> None:
    """Issue 19 item 7: "similar to § Title > Final steps (0.76)" repeated the title shown beside
    it, and the score: the reason names only the section nearest in meaning."""
    note("release.md", "# Release checklist\n\nTag the version and push the tag.\n\n## Final steps\n\n"
         "Upload the wheel to the package index and announce the release on the mailing list.\n")
    note("publish.md", "# Publishing\n\nUpload the wheel to the package index, then announce the new release.\n")
    engine = make_engine(root)
    engine.index()
    hit = _by_path(engine.related(root / "publish.md"))["release.md"]
    similar = [r for r in hit.reasons if r.startswith("similar")]
    assert similar in (["similar to § Final steps"], ["similar in meaning"]), hit.reasons
    assert all("Release checklist" not in r and "(" not in r for r in hit.reasons)
    assert similarity_reason("Release checklist", "Release checklist > Final steps") == "similar to § Final steps"
    assert similarity_reason("Release checklist", "Release checklist") == "similar in meaning"
    assert similarity_reason("Notes", "Setup > Final steps") == "similar to § Setup > Final steps"


def test_related_to_one_section_uses_that_section(root: Path, note: Note, make_engine: MakeEngine) -> None:
    """A note of two unrelated sections: the line decides which neighbours come first."""
    oven = " ".join(f"Preheat the oven and bake the bread loaf with a crisp crust, step {i}." for i in range(6))
    rail = " ".join(f"Take the express train from the station with a rail pass, leg {i}." for i in range(6))
    note("diary.md", f"# Diary\n\n## Kitchen\n\n{oven}\n\n## Journey\n\n{rail}\n")
    note("baking.md", "# Baking bread\n\nBake the loaf in a hot oven until the crust is golden and crisp.\n")
    note("trains.md", "# Rail travel\n\nExpress trains leave the central station every hour; a rail pass covers them.\n")
    engine = make_engine(root)
    engine.index()
    lines = (root / "diary.md").read_text().split("\n")
    kitchen = lines.index("## Kitchen") + 2
    journey = lines.index("## Journey") + 2
    assert engine.related(root / "diary.md", kitchen, limit=1)[0].path == "baking.md"
    assert engine.related(root / "diary.md", journey, limit=1)[0].path == "trains.md"


def test_unindexed_or_outside_paths(kb: Engine, tmp_path: Path) -> None:
    assert kb.related(kb.root / "no/such/note.md") == []
    with pytest.raises(OutsideRootError):
        kb.related(tmp_path / "elsewhere.md")


def test_a_markdown_link_without_the_extension_relates_both_notes(
    root: Path, note: Note, make_engine: MakeEngine
) -> None:
    """`[x](kettle)` opens kettle.md (definition adds `.md` as well): related counts it both ways."""
    note("tea.md", "# Tea\n\nSee [the kettle](kettle) before brewing.\n")
    note("kettle.md", "# Kettle\n\nDescale it monthly.\n")
    note("far/away.md", "# Shipping\n\nContainer freight rates.\n")
    engine = make_engine(root)
    engine.index()
    from_tea = _by_path(engine.related(root / "tea.md"))
    assert "linked from here" in from_tea["kettle.md"].reasons
    from_kettle = _by_path(engine.related(root / "kettle.md"))
    assert "links here" in from_kettle["tea.md"].reasons
