"""A short excerpt of a chunk for result lists: the line that best matches the query.

Every hit of every search gets one, so it is made without a Python step per (line, word): the
body is lowercased once, only the query words the body holds are looked for line by line, and
the prose after the chosen line is read only as far as the excerpt reaches
(docs/benchmarks.md, "Query cost before and after issue 10").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

SNIPPET_CHARS = 200
_FENCE_OR_RULE = re.compile(r"^\s*(```|~~~|---+\s*$|===+\s*$)")


def make_snippet(body: str, terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """The best-matching line (or the first content line) and what follows, up to `width`.

    The best line holds the most query `terms` (a heading counts half a term less: it repeats
    the title or breadcrumb shown beside the snippet), the first of equals; it needs one term.
    Fences, rules and blank lines are never shown."""
    raw = body.split("\n")
    shown = [i for i, line in enumerate(raw) if line.strip() and not _FENCE_OR_RULE.match(line)]
    if not shown:
        return ""
    heading = [raw[i].lstrip().startswith("#") for i in shown]
    best = heading.index(False) if False in heading else 0
    if terms:
        lowered_body = body.lower()  # (no character lowercases to or from "\n": lines stay lines)
        held = [term for term in terms if term in lowered_body]
        if held:
            lowered = lowered_body.split("\n")
            top, top_at = 0.0, -1
            for at, i in enumerate(shown):
                line = lowered[i]
                hits = 0
                for term in held:
                    if term in line:
                        hits += 1
                if hits and hits - (0.5 if heading[at] else 0.0) > top:
                    top, top_at = hits - (0.5 if heading[at] else 0.0), at
            if top >= 1:
                best = top_at
    line = " ".join(raw[shown[best]].split())
    if terms and len(line) > width:
        lowered_line = line.lower()
        first = min((lowered_line.find(t) for t in terms if t in lowered_line), default=0)
        start = max(0, first - width // 3)
        text = ("…" if start else "") + line[start:]
    else:
        # What follows the chosen line reads on as prose: later headings would only show as "## …".
        following = (raw[i] for at, i in enumerate(shown) if at > best and not heading[at])
        text = _words_up_to(line, following, width)
    if len(text) > width:
        cut = text[:width].rsplit(" ", 1)[0] if " " in text[:width] else text[:width]
        text = cut + "…"
    return text


def _words_up_to(first: str, following: Iterable[str], width: int) -> str:
    """`first` and the `following` lines with their spaces made single, joined by one space,
    read until the text is longer than `width`: later lines cannot change the first `width + 1`
    characters, and a long chunk is not joined whole for 200 of them."""
    pieces = [first]
    size = len(first)
    for line in following:
        if size > width:
            break
        piece = " ".join(line.split())
        pieces.append(piece)
        size += len(piece) + 1
    return " ".join(pieces)
