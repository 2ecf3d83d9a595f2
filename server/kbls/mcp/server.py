"""The MCP tools `search`, `related`, `read_note` and `status` on the SDK's `MCPServer` (stdio).

Each call works on the client's roots: the `--root` arguments when given, else the roots the
client declares (asked through the SDK's `ListRoots` resolver on every call, so a changed
workspace is seen at once), else the server's working folder. The tools are thin: they check
and convert arguments, run the backend call in a worker thread (the engine blocks) and turn a
`KblsError` into a tool error whose message the model can act on.
"""

# No `from __future__ import annotations`: the SDK evaluates the tools' annotations, and
# `Resolve(client_roots)` names a closure it could not find from a string.
import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ListRootsResult, ToolAnnotations
from pydantic import Field

from kbls import __version__
from kbls.errors import KblsError
from kbls.limits import MAX_LIMIT, MAX_QUERY_CHARS, Mode
from kbls.lsp.uris import client_uri
from kbls.mcp.backend import NotesBackend
from kbls.mcp.models import HitOut, NoteOut, RelatedOut, RootOut, SearchOut, StatusOut
from kbls.mcp.notes import MAX_NOTE_CHARS, MAX_NOTE_LINES
from kbls.query.filters import Filters

T = TypeVar("T")

INSTRUCTIONS = (
    "kbls searches the user's own notes and documentation (markdown, reStructuredText, text) by meaning "
    "and by words, from a local index. Use `search` to find sections, `read_note` to read one in full, "
    "`related` to find notes close to one you have, `status` to see which folders are indexed. "
    "Nothing here changes files; if a folder is not indexed, tell the user to run `kbls index`."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
MAX_FILTER_VALUES = 32

Query = Annotated[
    str,
    Field(
        min_length=1, max_length=MAX_QUERY_CHARS,
        description="What to look for, in natural language or keywords. May also carry filters inline: "
        "`tag:rust`, `path:notes/**`, `type:md`.",
    ),
]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description=f"How many results to return (1-{MAX_LIMIT}).")]
SearchMode = Annotated[
    Literal["hybrid", "semantic", "lexical"],
    Field(description="hybrid (default): meaning and words fused; semantic: meaning only; lexical: exact words only."),
]
TagList = Annotated[
    list[str] | None, Field(max_length=MAX_FILTER_VALUES, description="Only notes with one of these tags (no `#`).")
]
PathList = Annotated[
    list[str] | None,
    Field(
        max_length=MAX_FILTER_VALUES,
        description="Only notes whose root-relative path matches one of these globs, e.g. `projects/**`.",
    ),
]
TypeList = Annotated[
    list[str] | None,
    Field(
        max_length=MAX_FILTER_VALUES,
        description="Only notes of these front-matter `type:` values or file kinds (`md`, `rst`, `txt`).",
    ),
]
NotePath = Annotated[
    str,
    Field(
        min_length=1, max_length=4096,
        description="A note's path as a search hit gives it (relative to its root), or an absolute path inside a root.",
    ),
]
SEARCH_DESCRIPTION = (
    "Search the user's notes and docs; returns the best-matching sections, best first. Each hit names the note "
    "(root + path), the section's line range, its heading breadcrumb and a snippet. Read a hit in full with "
    "read_note(path, start_line, end_line). Searches every indexed root of the workspace."
)
RELATED_DESCRIPTION = (
    "Notes related to a note (by meaning, links and shared tags), or to its section at `line`. The note must be "
    "indexed: use a path from a search hit. Each result says why it is related; never returns the note itself."
)
STATUS_DESCRIPTION = (
    "Which folders (roots) are served and whether each is indexed: files, chunks, embedding model, files the "
    "index skipped. A root without an index needs `kbls index` (run by the user)."
)
READ_NOTE_DESCRIPTION = (
    "Read a note, or lines start_line..end_line of it (1-based, inclusive). Only note files inside an "
    "indexed root can be read (no `..`, nothing outside the roots, symlinks must stay inside). "
    f"At most {MAX_NOTE_LINES} lines or {MAX_NOTE_CHARS:,} characters per call; when `truncated` is true, "
    "call again with start_line = end_line + 1."
)
LineNumber = Annotated[int | None, Field(ge=1, description="A 1-based line number.")]


def file_uri_path(uri: str) -> Path | None:
    """The local folder of a `file://` root URI; None for any other scheme."""
    return client_uri(uri).path


def build_server(backend: NotesBackend, fixed_roots: Sequence[Path] = ()) -> MCPServer[Any]:
    """The kbls MCP server over `backend`; `fixed_roots` (from `--root`) replace the client's roots."""
    server: MCPServer[Any] = MCPServer(
        name="kbls", title="kbls notes search", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING",
    )
    fixed = [root.resolve() for root in fixed_roots]

    def client_roots(ctx: Context[Any, Any]) -> ListRoots | ListRootsResult:
        capabilities = ctx.client_capabilities
        if fixed or capabilities is None or capabilities.roots is None:
            return ListRootsResult(roots=[])
        return ListRoots()

    def roots_of(answer: ListRootsResult) -> list[Path]:
        if fixed:
            return fixed
        paths = [path for path in (file_uri_path(str(root.uri)) for root in answer.roots) if path is not None]
        return [path.resolve() for path in paths] or [Path.cwd().resolve()]

    async def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
        except KblsError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(annotations=READ_ONLY, description=SEARCH_DESCRIPTION)
    async def search(
        query: Query,
        roots: Annotated[ListRootsResult, Resolve(client_roots)],
        limit: Limit = 10,
        mode: SearchMode = "hybrid",
        tags: TagList = None,
        paths: PathList = None,
        types: TypeList = None,
    ) -> SearchOut:
        filters = Filters(paths=tuple(paths or ()), tags=tuple(t.lstrip("#") for t in tags or ()), types=tuple(types or ()))
        hits, notes = await call(backend.search, roots_of(roots), query, limit=limit, mode=Mode(mode), filters=filters)
        return SearchOut(hits=[HitOut.of(hit) for hit in hits], notes=notes)

    @server.tool(annotations=READ_ONLY, description=RELATED_DESCRIPTION)
    async def related(
        path: NotePath,
        roots: Annotated[ListRootsResult, Resolve(client_roots)],
        line: LineNumber = None,
        limit: Limit = 10,
    ) -> RelatedOut:
        hits = await call(backend.related, roots_of(roots), path, line=None if line is None else line - 1, limit=limit)
        return RelatedOut(hits=[HitOut.of(hit) for hit in hits])

    @server.tool(annotations=READ_ONLY, description=READ_NOTE_DESCRIPTION)
    async def read_note(
        path: NotePath,
        roots: Annotated[ListRootsResult, Resolve(client_roots)],
        start_line: LineNumber = None,
        end_line: LineNumber = None,
    ) -> NoteOut:
        note = await call(backend.read_note, roots_of(roots), path, start_line=start_line, end_line=end_line)
        return NoteOut.of(note)

    @server.tool(annotations=READ_ONLY, description=STATUS_DESCRIPTION)
    async def status(roots: Annotated[ListRootsResult, Resolve(client_roots)]) -> StatusOut:
        states = await call(backend.status, roots_of(roots))
        return StatusOut(roots=[RootOut.of(state) for state in states])

    return server


def serve_stdio(backend: NotesBackend, fixed_roots: Sequence[Path] = ()) -> int:
    """Run the MCP server on stdin/stdout until the client closes it."""
    server = build_server(backend, fixed_roots)
    try:
        server.run("stdio")
    finally:
        backend.close()
    return 0
