"""How results read, over the real `kbls serve` and model (issue 19 items 5-8): one row per note
with its other sections to expand, snippets that are sentences (not a table row or a dict dump),
reasons that do not repeat the title, hovers on headings and links only (prose when the client's
setting asks), and no link suggestion that is not near in meaning.

The workspace sits in a folder whose name holds a space, as most real vaults do.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types
from tests.support.corpus import write_config
from tests.support.lsp_client import LspSession

GIT = """# Git undo recipes

How to take back what git did, one recipe per section.

## Undo the last commit

To undo the last commit but keep its changes, run `git reset --soft HEAD~1`; the changes stay staged
and the commit is gone from the branch. Use `--mixed` to unstage them too, or `--hard` to throw the
changes away with the commit, which cannot be undone without the reflog.

## Undo a pushed commit

A commit already pushed is undone with `git revert <sha>`: git makes a new commit that undoes the old
one, so the history others pulled stays as it was. Reverting a merge commit needs `-m 1` to say which
parent to keep.

## Undo changes to a file

To throw away the changes to one file since the last commit, run `git restore <file>`; with
`--staged` it unstages the file instead and keeps the changes in the working tree. Older git versions
spell it `git checkout -- <file>`.

## Undo a rebase

After a rebase gone wrong, find the commit the branch pointed at before it with `git reflog`, then run
`git reset --hard` to that commit. The reflog keeps every position of the branch for ninety days, so
the commits are not lost.

## Undo an amend

An amended commit replaced the last commit with a new one; to undo the amend, reset to the previous
head that `git reflog` lists as `HEAD@{1}` with `git reset --soft`, and the amended changes come back
staged.
"""

DEPLOY = """# Deploy log

Notes from the deployment of the billing service.

## Final steps

| Step | Last dirty commit | Parent |
|---|---|---|
| Last dirty commit | 4af64070 | d404ebd0 |

```python
{'commit': '4af64070', 'parent': 'd404ebd0', 'dirty': True}
```

And this had done the trick! To undo the last commit of the deploy branch we ran git reset on the
build host. The service came back within a minute.
"""

SOURDOUGH = """# Sourdough starter

Feed the starter with flour and water every day; it doubles in a warm kitchen.

## Baking day

Shape the loaf, proof it overnight and bake it in a hot oven.
"""

RELEASE = """# Release checklist

Tag the version and push the tag to the repository.

## Final steps

Upload the wheel to the package index and announce the release on the mailing list.
"""

PUBLISH = """# Publishing a package

Upload the wheel to the package index, then announce the new release on the mailing list.

See [[Release checklist]] for the whole list.
"""

NOTES = {
    "git/undo.md": GIT, "work/deploy log.md": DEPLOY, "kitchen/sourdough.md": SOURDOUGH,
    "release.md": RELEASE, "publish.md": PUBLISH,
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("results") / "My Notes"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    write_config(root)
    return root


@pytest.fixture(scope="module")
def session(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    with LspSession([root], tmp_path_factory.mktemp("results-logs")) as s:
        s.wait_ready()
        yield s


def _hover(session: LspSession, uri: str, line: int, character: int) -> str | None:
    """The hover's markdown, None when there is none."""
    hover = session.hover(uri, line, character)
    if hover is None:
        return None
    assert isinstance(hover.contents, types.MarkupContent) and hover.contents.kind == types.MarkupKind.Markdown
    return hover.contents.value


def _open(session: LspSession, path: Path, text: str | None = None) -> str:
    return session.open_document(path, text if text is not None else path.read_text(encoding="utf-8"))


QUERY = "how do I undo the last git commit"


def test_grouped_by_note_one_hit_per_note_carries_its_other_sections(session: LspSession) -> None:
    sections = session.request("kb/search", {"query": QUERY, "limit": 10})["hits"]
    assert [h["path"] for h in sections].count("git/undo.md") >= 3  # what filled the list
    grouped = session.request("kb/search", {"query": QUERY, "limit": 10, "groupByFile": True})["hits"]
    paths = [h["path"] for h in grouped]
    assert len(paths) == len(set(paths)) and paths[0] == "git/undo.md"
    top = grouped[0]
    assert top["more"] == len(top["sections"]) >= 2
    shown = [(top["range"]["start"]["line"], top["breadcrumb"])]
    others = [(s["range"]["start"]["line"], s["breadcrumb"]) for s in top["sections"]]
    assert not set(shown) & set(others)
    assert all(s["breadcrumb"].startswith("Git undo recipes > ") for s in top["sections"])
    scores = [s["score"] for s in top["sections"]]
    assert scores == sorted(scores, reverse=True) and scores[0] <= top["score"]
    # every other section of the note the ungrouped search found is among them
    assert {(h["range"]["start"]["line"], h["breadcrumb"]) for h in sections if h["path"] == "git/undo.md"} <= {
        *shown, *others
    }


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_grouped_sections_carry_their_snippets_only_when_asked(session: LspSession, mode: str) -> None:
    # Made for every section of every grouped hit, a lexical answer's snippets cost more than the
    # search; the pickers show them once a note is expanded and ask then.
    params = {"query": QUERY, "limit": 10, "groupByFile": True, "mode": mode}
    typed = session.request("kb/search", params)["hits"]
    asked = session.request("kb/search", {**params, "sectionSnippets": True})["hits"]
    assert sum(len(h["sections"]) for h in typed) >= 2
    assert all(s["snippet"] == "" for h in typed for s in h["sections"])
    assert all(h["snippet"] for h in typed), "the hits' own snippets are there"
    without = [(h["path"], h["more"], [(s["range"], s["breadcrumb"], s["score"]) for s in h["sections"]]) for h in typed]
    assert without == [(h["path"], h["more"], [(s["range"], s["breadcrumb"], s["score"]) for s in h["sections"]]) for h in asked]
    amend = next(s for h in asked for s in h["sections"] if s["breadcrumb"].endswith("Undo an amend"))
    assert "amend" in amend["snippet"].lower(), amend
    assert all(s["snippet"] for h in asked for s in h["sections"])


def test_the_snippet_is_the_sentence_that_matches_not_a_table_row_or_a_dict_dump(session: LspSession) -> None:
    hits = session.request("kb/search", {"query": QUERY, "limit": 10, "groupByFile": True})["hits"]
    deploy = next(h for h in hits if h["path"] == "work/deploy log.md")
    assert deploy["snippet"].startswith("To undo the last commit of the deploy branch"), deploy["snippet"]
    assert "|" not in deploy["snippet"] and "{" not in deploy["snippet"]
    # where the match is in the table, the row is shown, as cells
    row = session.request("kb/search", {"query": "4af64070 d404ebd0 dirty", "limit": 5, "mode": "lexical"})["hits"]
    assert row and row[0]["snippet"].startswith(("{'commit': '4af64070'", "Last dirty commit · 4af64070")), row


def test_a_related_reason_names_only_what_the_title_does_not(session: LspSession, root: Path) -> None:
    hits = session.request("kb/related", {"uri": (root / "publish.md").as_uri()})["hits"]
    release = next(h for h in hits if h["path"] == "release.md")
    assert release["reasons"] and all("Release checklist" not in r and "(0." not in r for r in release["reasons"])
    assert "linked from here" in release["reasons"]
    assert any(r in ("similar in meaning", "similar to § Final steps") for r in release["reasons"]), release


def test_hover_answers_on_a_heading_and_a_link_not_in_prose(session: LspSession, root: Path) -> None:
    uri = _open(session, root / "publish.md")
    text = _hover(session, uri, 0, 3)
    assert text is not None and "**Related notes**" in text
    release_line = next(line for line in text.splitlines() if "release.md" in line)
    # the score first, the title once, the section in the reason only
    assert release_line.startswith("- 0.") and release_line.count("Release checklist") == 1, release_line
    assert _hover(session, uri, 2, 10) is None  # prose: the client did not ask for it
    link = _hover(session, uri, 4, 10)
    assert link is not None and link.startswith("**Links to** [Release checklist](file://"), link
    assert "My%20Notes/release.md)" in link.split("\n")[0]


def test_hover_in_prose_when_the_clients_setting_asks(root: Path, tmp_path: Path) -> None:
    with LspSession([root], tmp_path, settings={"kbls": {"hover": {"prose": True}}}) as session:
        session.wait_ready()
        uri = _open(session, root / "publish.md")
        prose = _hover(session, uri, 2, 10)
        assert prose is not None and "**Related notes**" in prose


def test_link_completion_offers_no_note_that_is_not_near_in_meaning(session: LspSession, root: Path) -> None:
    paragraph = "Gluons bind quarks inside protons through the strong interaction of chromodynamics. [["
    uri = _open(session, root / "physics.md", f"# Physics\n\n{paragraph}")
    found = session.complete(uri, 2, len(paragraph))
    assert found is not None and found.items  # with nothing near, every note by title
    details = [item.detail or "" for item in found.items]
    assert not any("meaning" in d for d in details), details
    paragraph = "Feed the sourdough starter flour and water before baking the loaf. [["
    uri = _open(session, root / "bread.md", f"# Bread\n\n{paragraph}")
    near = session.complete(uri, 2, len(paragraph))
    assert near is not None and near.items[0].label == "Sourdough starter"
    meanings = [float(d.split("meaning ")[1].split(" ")[0]) for d in (i.detail or "" for i in near.items) if "meaning" in d]
    assert meanings and min(meanings) >= 0.25, [i.detail for i in near.items]
