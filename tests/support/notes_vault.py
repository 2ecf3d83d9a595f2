"""A vault for the note-editing tests (diagnostics, code actions, outline, tags): wiki and
markdown links, anchors, aliases, nested folders, names with spaces and accents, two notes
answering to one name, recipes with front matter of their own and a journal note linking them
all, with a broken link of each kind. `JOURNAL_LINES` names the line of each link."""

from __future__ import annotations

import textwrap
from pathlib import Path

NOTES = {
    "projects/Café plans.md": """\
        # Café plans

        Opening a small coffee house with a roaster in the back.

        ## Budget

        Rent, the espresso machine and the first three months of beans.
        """,
    "projects/kbls/index.md": "# Kbls index\n\nThe language server's notes.\n",
    "areas/index.md": "# Areas index\n\nEvery area of responsibility.\n",
    "people/Ada Lovelace.md": """\
        ---
        aliases: [Ada, Countess of Lovelace]
        tags: [people, math/history]
        ---
        # Ada Lovelace

        Wrote the first published algorithm for Babbage's analytical engine.
        """,
    "recipes/sourdough-bread.md": """\
        ---
        type: recipe
        tags: [baking, bread]
        created: 2024-03-02
        ---
        # Sourdough bread

        Feed the starter, mix flour, water and salt, stretch and fold, proof overnight and bake
        the loaf in a hot dutch oven until the crust is dark.
        """,
    "recipes/pizza-dough.md": """\
        ---
        type: recipe
        tags: [baking]
        created: 2024-04-11
        ---
        # Pizza dough

        Flour, water, yeast, salt and olive oil; knead, rest a day in the fridge, stretch thin
        and bake on a stone as hot as the oven goes.
        """,
    "recipes/pancakes.md": """\
        ---
        type: recipe
        tags: [breakfast]
        created: 2024-05-20
        ---
        # Pancakes

        Eggs, milk, flour and a pinch of sugar, fried in butter.
        """,
}

JOURNAL = "journal/2024 été.md"
JOURNAL_TEXT = """\
# Summer journal

Plans: [[Café plans]] and its [[Café plans#Budget]], not its [[Café plans#Opening hours]].
Met [[Ada]] again; the [[index]] needs sorting.
Tonight I bake [[Sourdugh bread]] with a dark crust from the dutch oven.
Then [[Focaccia]]: an Italian flat bread with olive oil and rosemary, baked in a tray.
Spaced: [budget](../projects/Caf%C3%A9%20plans.md#budget), [Ada](<../people/Ada Lovelace.md>).
Out: [secret](../../outside.md), gone: [old](../archive/old.md), [[#Summer journal]], [[#Winter]].

```markdown
[[Not a link in code]]
```

Inline `[[not a link either]]` #baking

Sunday: pizza dough again, with Ada Lovelace's notes and [[Pancakes]] for breakfast.
"""
#: line of each link in `JOURNAL_TEXT`.
LINE_OF = {
    "plans": 2, "ada": 3, "index": 3, "sourdough": 4, "focaccia": 5, "spaced": 6, "out": 7, "mention": 15,
}


def write_vault(root: Path) -> Path:
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    (root / JOURNAL).parent.mkdir(parents=True, exist_ok=True)
    (root / JOURNAL).write_text(JOURNAL_TEXT, encoding="utf-8")
    return root
