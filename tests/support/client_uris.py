"""File URIs as the editors write them, for tests that send a document's URI as a client would."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote


def vscode_uri(path: Path) -> str:
    """As VS Code writes it: every reserved character escaped (Python's `as_uri` escapes the same)."""
    return path.as_uri()


def neovim_uri(path: Path) -> str:
    """As Neovim's `vim.uri_from_fname` writes it: RFC 3986's sub-delimiters, `:` and `@` left as
    they are, escapes in lower-case hex."""
    escaped = quote(str(path), safe="/!$&'()*+,;=:@")
    return "file://" + re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), escaped)
