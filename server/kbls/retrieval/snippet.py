"""A short excerpt of a chunk for result lists: the line that best matches the query."""

from __future__ import annotations

import re

SNIPPET_CHARS = 200
_FENCE_OR_RULE = re.compile(r"^\s*(```|~~~|---+\s*$|===+\s*$)")


def make_snippet(body: str, terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """The best-matching line (or the first content line) and what follows, up to `width`."""
    lines = [line for line in body.split("\n") if line.strip() and not _FENCE_OR_RULE.match(line)]
    if not lines:
        return ""
    best = 0
    content = [i for i, line in enumerate(lines) if not line.lstrip().startswith("#")]
    if content:
        best = content[0]
    if terms:
        def hits(line: str) -> int:
            lowered = line.lower()
            return sum(1 for t in terms if t in lowered)

        # A heading repeats the title or breadcrumb shown beside the snippet: prefer prose.
        scores = [hits(line) - (0.5 if line.lstrip().startswith("#") else 0) for line in lines]
        if max(scores) >= 1:
            best = max(range(len(lines)), key=lambda i: (scores[i], -i))
    # What follows the chosen line reads on as prose: later headings would only show as "## …".
    following = [line for line in lines[best + 1 :] if not line.lstrip().startswith("#")]
    text = " ".join(" ".join([lines[best], *following]).split())
    line = " ".join(lines[best].split())
    if terms and len(line) > width:
        lowered = line.lower()
        first = min((lowered.find(t) for t in terms if t in lowered), default=0)
        start = max(0, first - width // 3)
        text = ("…" if start else "") + line[start:]
    if len(text) > width:
        cut = text[:width].rsplit(" ", 1)[0] if " " in text[:width] else text[:width]
        text = cut + "…"
    return text
