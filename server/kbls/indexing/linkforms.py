"""The link forms of a note, written once for the indexer (`indexing.parse`) and the editor
features (`retrieval.linksyntax`): `[[name]]`, `[[name#heading]]`, `[[name|label]]` and
`[label](path "title")`.

No `[` inside a link's parts: otherwise a line of `[[[[…` or `[](` repeated makes every start
scan to the end of the line (quadratic: a 60 KB line took 45 s).
"""

from __future__ import annotations

import re

#: groups: 1 the name (may be empty: `[[#heading]]`), 2 the heading, 3 the label.
WIKI_LINK = re.compile(r"\[\[([^\[\]\|#\n]*)(?:#([^\[\]\|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
#: groups: 1 the label, 2 the target (path, URL, `#fragment`...).
MARKDOWN_LINK = re.compile(r"\[([^\[\]\n]*)\]\(\s*<?([^)\s>\[]+)>?(?:\s+\"[^\"\n]*\")?\s*\)")
#: a target starting like this is a URL (`https:`, `mailto:`), not a note.
URL_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
