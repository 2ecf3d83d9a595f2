"""The link problems of every note of a root, for workspace diagnostics (`workspace/diagnostic`):
from the index's links (`link_spans`: no note is read for them, except one that links its own
headings, read for those), checked as an open note's are (`check_links`, against the same
catalogue, whose kept resolutions make a second pull cheap).

Each note's report carries a result id made of what it says: the note's content hash, the
catalogue's version, the root's severities and the problems found (a link to a file the index does
not hold, an image, is checked on disk, so the problems can change while the index does not); a
client that sends it back gets "unchanged" for that note.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass

from kbls.config import DiagnosticsConfig
from kbls.editing.linkcheck import MAX_CHECKED_LINKS, LinkProblem, check_links
from kbls.engine import Engine
from kbls.links.resolve import MAX_HEADING_READ_BYTES
from kbls.retrieval.backlinks import link_ref
from kbls.storage.records import LinkSpan, Span


@dataclass(frozen=True, slots=True)
class NoteProblems:
    """One note's link problems, each with where it is written (in every position unit)."""

    path: str
    result_id: str
    problems: list[tuple[LinkProblem, Span]]


@dataclass(frozen=True, slots=True)
class RootProblems:
    #: every note of the root that writes links, but those left out (open in the editor).
    notes: list[NoteProblems]
    severities: DiagnosticsConfig


def root_problems(engine: Engine, skip: Collection[str] = ()) -> RootProblems:
    """The link problems of the notes of `engine`'s root that write links, but those in `skip`."""
    links = engine.links
    catalogue = links.catalogue()
    severities = engine.config.diagnostics
    by_path: dict[str, list[LinkSpan]] = {}
    for found in engine.store.every_link():
        if found.path not in skip:
            by_path.setdefault(found.path, []).append(found.link)
    hashes = {path: row.hash or "" for path, row in engine.store.files(by_path).items()}
    stamp = f"{catalogue.version}|{severities}"
    out = []
    for path, spans in sorted(by_path.items()):
        spans = spans[:MAX_CHECKED_LINKS]
        refs = [link_ref(span) for span in spans]
        where = {id(ref): span.span for ref, span in zip(refs, spans, strict=True)}
        own_headings = any(not ref.target and ref.heading for ref in refs)
        lines = (links.resolver.read_lines(path, MAX_HEADING_READ_BYTES) or []) if own_headings else []
        problems = check_links(catalogue, links.resolver, path, lines, refs)
        located = [(problem, where[id(problem.ref)]) for problem in problems]
        said = "|".join(f"{p.problem}:{p.message}:{p.notes}:{span.line}:{span.start}:{span.end}" for p, span in located)
        result_id = hashlib.sha1(f"{stamp}|{hashes.get(path, '')}|{said}".encode()).hexdigest()[:20]
        out.append(NoteProblems(path, result_id, located))
    return RootProblems(out, severities)
