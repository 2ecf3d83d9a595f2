"""The link forms of a note, written once for the indexer (`indexing.parse`) and the editor
features (`retrieval.linksyntax`): `[[name]]`, `[[name#heading]]`, `[[name|label]]` and
`[label](path "title")`; and how a wiki link's name is compared with a note's names.

No `[` inside a link's parts: otherwise a line of `[[[[…` or `[](` repeated makes every start
scan to the end of the line (quadratic: a 60 KB line took 45 s). The alternatives inside a
destination or title start with different characters, so no text can be read two ways.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata

#: what ends a wiki link's name: the characters of its syntax.
WIKI_NAME_STOPS = r"\[\]|#\n"
#: groups: 1 the name (may be empty: `[[#heading]]`), 2 the heading, 3 the label.
WIKI_LINK = re.compile(rf"\[\[([^{WIKI_NAME_STOPS}]*)(?:#([^\[\]\|\n]*))?(?:\|([^\[\]\n]*))?\]\]")

# CommonMark's link destination: in `<…>` (no line break, `<` or `>` unless escaped: the way to
# write a path with spaces), or bare (no space, parentheses only escaped or balanced one deep,
# not starting with `<`); then an optional title in "…", '…' or (…) after a space.
_ANGLED = r"<((?:[^<>\\\n\[]|\\.)*)>"
_BARE = r"(?!<)((?:[^\s()\\\[]|\\\S|\([^\s()\\\[]*\))+)"
_TITLE = r"""(?:\s+(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\((?:[^()\\\n]|\\.)*\)))?"""
#: groups: 1 the label, 2 a destination written in `<…>`, 3 one written bare (see `destination`).
MARKDOWN_LINK = re.compile(rf"\[([^\[\]\n]*)\]\(\s*(?:{_ANGLED}|{_BARE}){_TITLE}\s*\)")
#: a target starting like this is a URL (`https:`, `mailto:`), not a note.
URL_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash before ASCII punctuation (CommonMark)


def destination(link: re.Match[str]) -> str:
    """A `MARKDOWN_LINK` match's destination as written, its backslash escapes undone (`\\<`
    is `<`): a path, a URL or a `#fragment`, still percent-encoded."""
    return unescape(link.group(2) if link.group(2) is not None else link.group(3))


def unescape(text: str) -> str:
    """`text` with CommonMark's backslash escapes undone (a backslash before ASCII punctuation)."""
    return _ESCAPED.sub(r"\1", text)


def name_key(name: str) -> str:
    """A name as links compare it: trimmed, caseless and in one Unicode form (canonical caseless
    matching: NFD, casefold, then NFC), so `Café` typed composed names a file whose name macOS
    stored decomposed, and `ÉTÉ` names `Été`."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold()).strip()


def path_keys(path: str) -> tuple[str, str]:
    """The keys of the names a `[[name]]` without a `/` may give a note at `path`: its file stem
    and its file name (`[[note.md]]` is `[[note]]`, as Obsidian reads it)."""
    file_name = posixpath.basename(path)
    return name_key(posixpath.splitext(file_name)[0]), name_key(file_name)


def folder_keys(path: str) -> tuple[str, str]:
    """The keys of the names a `[[folder/name]]` may give a note at `path`: the path without its
    extension, and the whole path."""
    return name_key(posixpath.splitext(path)[0]), name_key(path)
