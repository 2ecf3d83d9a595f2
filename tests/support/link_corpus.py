"""A workspace for the link tests: six notes on distinct topics, linked in a chosen wiki style.

Each title shares no word with `SLEEPLESS`, a paragraph about the topic of `health/sleep.md`:
a completion that finds that note first found it by meaning, not by a word.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

#: a paragraph about sleep that never says "sleep" or "hygiene".
SLEEPLESS = (
    "I lay awake until three again last night, staring at the ceiling. Tonight the phone stays "
    "in the kitchen, the bedroom stays dark and cool, and no coffee after lunch. "
)

NOTES = {
    "health/sleep.md": """\
        ---
        tags: [health]
        ---
        # Sleep hygiene

        Going to bed at the same hour every night, a dark and quiet bedroom, no screens before
        bed and no caffeine in the afternoon help against insomnia and restless nights.

        ## Evening routine

        Dim the lights an hour before bed, read a paper book, keep the room cool.
        """,
    "garden/tomatoes.md": """\
        # Growing tomatoes

        Sow the seeds indoors in early spring, move the seedlings outside after the last frost,
        water the plants at the roots and tie the stems to a stake as they climb.
        """,
    "cooking/sourdough.md": """\
        # Sourdough starter

        Mix flour and water, feed the culture daily and wait for the wild yeast to make it
        bubble; a lively culture doubles in a few hours and leavens a crusty loaf of bread.
        """,
    "finance/index-funds.md": """\
        # Index funds

        A low-cost fund that tracks the whole stock market: buy regularly, keep fees low and
        hold the portfolio for decades instead of picking single shares.
        """,
    "tech/git-rebase.md": """\
        # Rewriting history with rebase

        Replay the commits of a branch onto another base, squash fixups and keep a linear
        history before merging into the main branch of the repository.
        """,
    "travel/kyoto.md": """\
        # Trip to Kyoto

        Temples, shrines and gardens; the bullet train from Tokyo takes two hours and a rail
        pass covers it. Visit the bamboo grove early in the morning.
        """,
}

#: how the notes link each other in each wiki style (garden and travel link the sleep note).
STYLES = {
    "title": ("[[Sleep hygiene]]", "[[Index funds]]"),
    "path": ("[[health/sleep|Sleep hygiene]]", "[[finance/index-funds|Index funds]]"),
}


def write_link_workspace(root: Path, style: str) -> Path:
    """The notes under `root`, garden and travel linking in `style`; returns `root`."""
    first, second = STYLES[style]
    for rel, text in NOTES.items():
        body = textwrap.dedent(text)
        if rel in ("garden/tomatoes.md", "travel/kyoto.md"):
            body += f"\nSee also {first} and {second}.\n"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    return root
