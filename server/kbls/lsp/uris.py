"""The URIs clients send, read once: the file a URI names and the key of its open document.

pygls keeps an open document under `urllib.parse.unquote(uri)` (`Workspace.put_text_document`,
`update_text_document`, `remove_text_document`), not under the URI as sent: a client sends
`file:///home/me/My%20Notes/a.md` (VS Code also `file:///c%3A/...`), the document sits under
`file:///home/me/My Notes/a.md`. A lookup by the sent URI finds nothing whenever the path holds
anything percent-encoded (a space, an accent, `#`, `%`, `[`), which is most real vaults.

The path is decoded from the URI's parts, not from that key: a decoded `%23` is a `#` in a file
name, not a fragment. It is read as pygls's `to_fs_path` reads it (drive letter lower-cased),
with `localhost` as this machine and the platform's form a parameter, so that the Windows form
is tested everywhere. Neither key nor path is Unicode-normalised: on Linux a file named with a
decomposed `é` is another file than one named composed, and the client names the one it opened.

URIs the server sends back are `file_uri` of the real path, which every client opens.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from pygls.uris import from_fs_path

if TYPE_CHECKING:
    from pygls.workspace import TextDocument, Workspace

log = logging.getLogger(__name__)

_DRIVE = re.compile(r"^/[A-Za-z]:")
_WINDOWS = os.name == "nt"


@dataclass(frozen=True, slots=True)
class ClientUri:
    """A URI as the client sent it, with the two things the server reads from it."""

    uri: str
    #: the key pygls keeps the open document under
    key: str
    #: the file it names, in this platform's form; None for any scheme but `file`
    path: Path | None


def client_uri(uri: str, *, windows: bool = _WINDOWS) -> ClientUri:
    """Read a client's URI: pygls's document key and the file path.

    :param windows: read the path as Windows does (drive letter, `\\`); the platform's by default.
    """
    parts = urlsplit(uri)
    path = None
    if parts.scheme.lower() == "file":
        local = _local_path(unquote(parts.netloc), unquote(parts.path), windows)
        path = Path(local) if local else None
    return ClientUri(uri=uri, key=unquote(uri), path=path)


def _local_path(host: str, path: str, windows: bool) -> str | None:
    if host and host.lower() != "localhost":
        if not windows:
            return None  # a file on another machine (a UNC share) is no file here
        return str(PureWindowsPath(f"//{host}{path}"))
    if windows:
        if _DRIVE.match(path):  # `/c:/x` names `c:\x`; the drive lower-cased, as pygls and VS Code do
            path = path[1].lower() + path[2:]
        return str(PureWindowsPath(path)) if path else None
    return str(PurePosixPath(path)) if path.startswith("/") else None


def file_uri(path: Path | str) -> str:
    """The URI of a real file, as the server sends it (every client opens it)."""
    return from_fs_path(str(path)) or ""


def open_text(workspace: Workspace, uri: str, feature: str) -> TextDocument | None:
    """The document the client opened at `uri`, a file or not (an untitled buffer); None, and a
    log line naming the key looked up, when it is not open.

    :param feature: the request asking, named in the log.
    """
    key = client_uri(uri).key
    document: TextDocument | None = workspace.text_documents.get(key)
    if document is None:
        log.warning("%s: no open document for %s (looked up as %r; %d open)", feature, uri, key,
                    len(workspace.text_documents))
    return document


def open_document(workspace: Workspace, uri: str, feature: str) -> tuple[TextDocument, Path] | None:
    """The document the client opened at `uri` and its file; None (and a log line saying why) when
    it is not open or not a file.

    :param feature: the request asking, named in the log.
    """
    document = open_text(workspace, uri, feature)
    if document is None:
        return None
    read = client_uri(uri)
    if read.path is None:
        log.info("%s: %s is not a local file; no answer", feature, uri)
        return None
    return document, read.path
