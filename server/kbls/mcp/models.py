"""The tools' results as pydantic models: the SDK derives each tool's output JSON schema from them.

Field descriptions are read by the model that calls the tools, so they say what a value is
for. Lines are 1-based and inclusive here (the engine's `Hit` counts from 0).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from kbls.mcp.backend import NoteText, RootState
from kbls.results import Hit


class HitOut(BaseModel):
    root: str = Field(description="Absolute path of the indexed root that holds the note.")
    path: str = Field(description="Path of the note relative to its root; pass it to read_note or related.")
    start_line: int = Field(description="First line of the matching section (1-based).")
    end_line: int = Field(description="Last line of the matching section (1-based, inclusive).")
    title: str = Field(description="Title of the note.")
    breadcrumb: str = Field(description="Headings leading to the section, e.g. 'Rust > Ownership > Moves'.")
    snippet: str = Field(description="A short excerpt of the section; read_note gives the full text.")
    score: float = Field(description="Relevance; higher is better. Only comparable within one result list.")
    reasons: list[str] = Field(default_factory=list, description="Why a related note was chosen (related only).")

    @classmethod
    def of(cls, hit: Hit) -> HitOut:
        return cls(
            root=hit.root, path=hit.path, start_line=hit.start_line + 1, end_line=hit.end_line + 1,
            title=hit.title, breadcrumb=hit.breadcrumb, snippet=hit.snippet, score=hit.score, reasons=list(hit.reasons),
        )


class SearchOut(BaseModel):
    hits: list[HitOut] = Field(description="Best first. Empty when nothing matched.")
    notes: list[str] = Field(default_factory=list, description="Roots that were skipped, and why.")


class RelatedOut(BaseModel):
    hits: list[HitOut] = Field(description="Related notes, best first; never the note itself.")


class NoteOut(BaseModel):
    root: str
    path: str
    start_line: int = Field(description="First line returned (1-based).")
    end_line: int = Field(description="Last line returned (1-based, inclusive).")
    total_lines: int = Field(description="Lines in the whole note.")
    truncated: bool = Field(description="True when the limit cut the range; call again from end_line + 1.")
    text: str = Field(description="The lines start_line..end_line, joined with newlines.")

    @classmethod
    def of(cls, note: NoteText) -> NoteOut:
        return cls(
            root=note.root, path=note.path, start_line=note.start_line, end_line=note.end_line,
            total_lines=note.total_lines, truncated=note.truncated, text=note.text,
        )


class RootOut(BaseModel):
    root: str = Field(description="Absolute path of the root.")
    indexed: bool = Field(description="Whether the root has an index the tools can use.")
    files: int = 0
    chunks: int = 0
    model: str = Field(default="", description="Embedding model of the index.")
    store: str = Field(default="", description="Where the index is stored.")
    problems: list[str] = Field(default_factory=list, description="Files the index skipped, with the reason.")
    message: str | None = Field(default=None, description="What to do when the root is not indexed.")

    @classmethod
    def of(cls, state: RootState) -> RootOut:
        status = state.status
        if status is None:
            return cls(root=state.root, indexed=state.indexed, message=state.message)
        return cls(
            root=state.root, indexed=state.indexed, files=status.files, chunks=status.chunks, model=status.model,
            store=status.store, problems=[f"{p.path}: {p.reason}" for p in status.errors], message=state.message,
        )


class StatusOut(BaseModel):
    roots: list[RootOut] = Field(description="Every root this server serves, indexed or not.")
