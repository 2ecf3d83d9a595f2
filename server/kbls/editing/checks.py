"""A note's link problems and a broken link's fixes, for one root's engine: what the LSP layer
asks through `Daemon.in_root` and turns into diagnostics and code actions.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from kbls.config import DiagnosticsConfig
from kbls.editing.linkcheck import MAX_CHECKED_LINKS, LinkProblem, Problem, check_links, sentence_of
from kbls.editing.linkfixes import LinkRewrite, did_you_mean, heading_fixes, label_of, rewrite
from kbls.editing.newnote import NewNote, new_note
from kbls.engine import Engine
from kbls.links.resolve import MAX_HEADING_READ_BYTES
from kbls.links.suggest import NoteLinks
from kbls.links.syntax import LinkRef, heading_text
from kbls.links.view import NoteView


@dataclass(frozen=True, slots=True)
class LinkReport:
    """The problems of a note's links, with its root's severities."""

    problems: list[LinkProblem]
    severities: DiagnosticsConfig


@dataclass(frozen=True, slots=True)
class LinkFixes:
    """What may fix one link: None/[] where it has no problem of that kind."""

    problem: LinkProblem | None = None
    #: notes it may have meant (a missing note), or an ambiguous name's notes, best first.
    rewrites: list[LinkRewrite] = field(default_factory=list)
    #: (heading, rewritten link) for a heading the note does not have.
    headings: list[tuple[str, str]] = field(default_factory=list)
    new_note: NewNote | None = None


def report(engine: Engine, source: str, view: NoteView) -> LinkReport:
    """The problems of the links of the note at `source` (whose text is `view`)."""
    links = engine.links
    found = check_links(links.catalogue(), links.resolver, source, view.lines, view.links[:MAX_CHECKED_LINKS])
    return LinkReport(found, engine.config.diagnostics)


def fixes(links: NoteLinks, source: str, ref: LinkRef, lines: list[str], today: dt.date) -> LinkFixes:
    """The fixes of `ref` (a link of the note at `source`, whose text is `lines`)."""
    catalogue = links.catalogue()
    found = check_links(catalogue, links.resolver, source, lines, [ref])
    if not found:
        return LinkFixes()
    problem = found[0]
    sentence = sentence_of(lines, ref)
    if problem.problem == Problem.MISSING_NOTE:
        title = label_of(ref, lines)
        return LinkFixes(
            problem, did_you_mean(links, catalogue, source, ref, sentence, lines),
            new_note=new_note(links, catalogue, links.resolver, source, ref, title, sentence, lines, today),
        )
    if problem.problem == Problem.AMBIGUOUS:
        return LinkFixes(problem, _each_of(links, source, ref, lines, problem))
    if problem.problem == Problem.MISSING_HEADING and problem.notes:
        target = problem.notes[0]
        target_lines = lines if target == source else links.resolver.read_lines(target, MAX_HEADING_READ_BYTES) or []
        headings = [text for line in target_lines if (text := heading_text(line))]
        note = catalogue.by_path.get(target)
        return LinkFixes(problem, headings=heading_fixes(ref, lines, headings, note.title if note else ""))
    return LinkFixes(problem)


def _each_of(links: NoteLinks, source: str, ref: LinkRef, lines: list[str], problem: LinkProblem) -> list[LinkRewrite]:
    """An ambiguous link rewritten to name each of its notes alone (by path where it must)."""
    catalogue = links.catalogue()
    style = links.style(catalogue, lines)
    out = []
    for path in problem.notes:
        note = catalogue.by_path.get(path)
        if note is not None:
            out.append(LinkRewrite(path, note.title, rewrite(catalogue, style, source, ref, lines, note), 1.0, 1.0, None))
    return out
