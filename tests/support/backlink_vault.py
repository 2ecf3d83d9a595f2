"""A vault for references, backlinks and rename: a note linked in every way a workspace links
(title, alias, path with label, anchors as text and as GitHub slug, markdown links in `<…>` and
percent-encoded, relative from a nested folder), names with spaces and accents, an ambiguous
name, tags inline and in front matter, and links inside code that are not links."""

from __future__ import annotations

from pathlib import Path

CAFE = "Projets/Café Crème.md"
HUB = "hub.md"
READER = "deep/nested/reader.md"
CODE = "Projets/other.md"
NOTES_A, NOTES_B = "a/Notes.md", "b/Notes.md"
PLAIN = "plain.md"

NOTES = {
    CAFE: (
        "---\ntitle: Café Crème\naliases: [Coffee]\ntags: [drinks]\n---\nIntro about coffee.\n\n"
        "## Brewing Notes\n\nSteps, see [[#Milk]].\n\n## Milk\n\nFoam.\n"
    ),
    HUB: (
        "# Hub\n\n"
        "- [[Café Crème]] by title\n"  # line 2
        "- [[Coffee|a cup]] by alias\n"  # 3
        "- [[Café Crème#Brewing Notes]] anchor as text\n"  # 4
        "- [crème](<Projets/Café Crème.md#brewing-notes>) anchor as slug\n"  # 5
        "- [encoded](Projets/Caf%C3%A9%20Cr%C3%A8me.md) percent-encoded\n"  # 6
        "- [[Projets/Café Crème|path label]] by path\n"  # 7
        "- about #drinks here\n"  # 8
        "- [[plain]] has no title of its own\n"  # 9
    ),
    PLAIN: "no heading, no front matter: the file name is the title\n",
    READER: (
        "# Reader\n\nSee [[Café Crème#Milk]] and [up](../../Projets/Café%20Crème.md#milk).\n\n"
        "Which [[Notes]]? The nearest.\n"
    ),
    CODE: "# Other\n\n`[[Café Crème]]` in code, not a link.\n\n```\n[[Café Crème]]\n```\n",
    NOTES_A: "# Notes\n\nThe first notes.\n",
    NOTES_B: "# Notes\n\nThe second notes.\n",
}


def write_vault(root: Path) -> Path:
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root
