"""Heading-aware chunking bounded by the embedding model's own token count.

A chunk never spans two sections unless both are tiny; each carries its breadcrumb
(`Title > Section > Subsection`) and 0-based inclusive line range. The embedded text is the
breadcrumb (for a chunk after the note's first, then the opening words of the note's preamble),
a blank line and the body, and is verified against the model's tokenizer, so the model never
silently truncates a chunk. Fenced code blocks stay whole where they fit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from kbls.config import ChunkConfig
from kbls.hashing import content_hash
from kbls.indexing.parse import ParsedNote, Section

#: version of what parsing and chunking produce. BUMP IT with any change to the output of
#: `kbls.indexing.parse`/`markdown` (sections, headings, line ranges, titles) or of this module
#: (chunk bounds, breadcrumbs, the embedded text): stores record it (`Chunker.fingerprint`, meta
#: `chunking`) and the next full scan re-chunks every note of a store built by another version.
#: 2: `aliases:` given as one string is split on commas only ("Sleep hygiene" is one alias).
#: 3: links: `[x](<a b.md>)` and titles in '…' or (…) are read, wiki targets kept as `name_key`.
#: 4: a chunk after a note's first embeds the note's opening words (`OPENING_TOKENS`).
#: 5: front matter scalars stay text (`title: 2024-01-05`, `title: No`); a note that is only
#:    front matter gets one chunk (its title and aliases) over the front matter's lines.
#: 6: the opening words are the preamble's only (none when a note starts with a section).
#: 7: a markdown note's title is the H1 that opens it (else its file name, never a later H1 or
#:    a `#tag` line); template markup (Hugo shortcodes, Liquid) is out of the indexed text.
CHUNKING_VERSION = 7
BREADCRUMB_SEP = " > "
#: tiny sections merge only while the result stays under this share of the budget, so line
#: ranges stay precise (measured on the eval set: 0.5 lifted semantic nDCG@10 0.787 -> 0.801).
MERGE_CAP = 0.5
#: a chunk after a note's first carries the note's opening words, up to this many tokens (about
#: a sentence), between its breadcrumb and its body in the embedded text: cut from the middle of
#: a note, a section no longer says what the note is about. Measured in docs/adr/0003-ranking.md
#: ("A chunk in its note's context"): 16-24 tokens lifted both shared sets, 32-40 less so.
OPENING_TOKENS = 24
#: an opening that would have to be cut shorter than this (a chunk already near the model's
#: limit) is left out: a few words say nothing.
MIN_OPENING_TOKENS = 4
#: texts tokenized per call when counting: bounds the tokenizer's memory on huge notes.
COUNT_SLICE = 1024
#: characters of text whose token counts a chunker remembers (`RememberedCounts`)
REMEMBERED_CHARS = 4_000_000
#: a text longer than this many characters per token of room cannot fit: it is split by lines
#: (or by tokens) without being tokenized whole first.
LONG_TEXT_CHARS_PER_TOKEN = 64
#: a line over budget is split by tokens window by window, windows of this many characters.
LONG_LINE_WINDOW = 16_384


class TokenCounter(Protocol):
    max_tokens: int
    passage_prefix: str

    def count_tokens(self, texts: Sequence[str]) -> list[int]: ...

    def split_by_tokens(self, text: str, budget: int) -> list[tuple[int, int]]: ...


@dataclass(frozen=True)
class Chunk:
    start_line: int
    end_line: int
    breadcrumb: str
    body: str
    #: what the model embeds (without any model-specific passage prefix).
    text: str
    #: hash of `text`: decides whether a chunk must be embedded again.
    hash: str
    tokens: int


@dataclass
class _Piece:
    start_line: int
    end_line: int
    text: str
    tokens: int  # without special tokens


def text_hash(text: str) -> str:
    return content_hash(text.encode("utf-8"))


def embedded_text(breadcrumb: str, body: str, context: str = "") -> str:
    """What the model embeds for a chunk: its breadcrumb and its note's opening (each where
    there is one), a blank line, the body."""
    head = "\n".join(part for part in (breadcrumb, context) if part)
    return f"{head}\n\n{body}" if head else body


def opening_words(note: ParsedNote) -> str:
    """The first words of the note's preamble, the text under its title before any section
    heading (headings left out, whitespace collapsed): what the note says about itself as a
    whole. A note that starts with a section has none: the first section's text is about that
    section (a diary's first day), not about the others. At least `OPENING_TOKENS` tokens where
    the preamble has them (a word is one token or more)."""
    words: list[str] = []
    for section in note.sections:
        if section.headings:
            break
        for block in section.blocks:
            if block.is_heading:
                continue
            # A CJK paragraph is one "word": bound what is kept before it is tokenized.
            words.extend(word[: OPENING_TOKENS * 8] for word in block.text.split()[:OPENING_TOKENS])
            if len(words) >= OPENING_TOKENS:
                return " ".join(words[:OPENING_TOKENS])
    return " ".join(words)


class RememberedCounts:
    """Token counts of the texts counted lately. A save chunks its whole note again, and every
    block but the edited ones counts as before: tokenizing them again was most of a save of a long
    note (34 of 56 ms for a 19,600-character chapter). Forgotten all at once past
    REMEMBERED_CHARS characters, so a first index of a big vault holds no more than that."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._chars = 0

    def get(self, text: str) -> int | None:
        return self._counts.get(text)

    def put(self, text: str, count: int) -> None:
        if len(text) > REMEMBERED_CHARS // 100:
            return
        if self._chars + len(text) > REMEMBERED_CHARS:
            self._counts, self._chars = {}, 0
        self._counts[text] = count
        self._chars += len(text)


class Chunker:
    """Turns parsed notes into chunks that fit one model's token budget."""

    def __init__(self, counter: TokenCounter, config: ChunkConfig | None = None) -> None:
        self.counter = counter
        self.config = config or ChunkConfig()
        self._remembered = RememberedCounts()
        self._specials = counter.count_tokens([""])[0]
        prefix = counter.passage_prefix
        self._prefix_tokens = counter.count_tokens([prefix])[0] - self._specials if prefix else 0
        #: tokens available for breadcrumb + body of one chunk.
        self.budget = min(self.config.max_tokens, counter.max_tokens) - self._specials - self._prefix_tokens

    @property
    def fingerprint(self) -> str:
        """What decides this chunker's output besides the note: `CHUNKING_VERSION` and the
        effective settings (the budget after clamping to the model, overlap, merge size), hashed.
        A store built under another fingerprint holds chunks this chunker would not make."""
        settings = {"budget": self.budget, "overlap": self.config.overlap_tokens, "min": self.config.min_tokens}
        digest = content_hash(json.dumps(settings, sort_keys=True).encode(), digest_bytes=8)
        return f"{CHUNKING_VERSION}:{digest}"

    def _count(self, texts: list[str]) -> list[int]:
        return [n - self._specials for n in self._count_with_specials(texts)]

    def _count_with_specials(self, texts: list[str]) -> list[int]:
        counts = {text: n for text in texts if (n := self._remembered.get(text)) is not None}
        missing = [text for text in dict.fromkeys(texts) if text not in counts]
        # In slices: the tokenizer holds one encoding per text (a 2 MB list note of 490k lines
        # in one call peaked at 1.1 GB).
        for start in range(0, len(missing), COUNT_SLICE):
            part = missing[start : start + COUNT_SLICE]
            for text, n in zip(part, self.counter.count_tokens(part), strict=True):
                counts[text] = n
                self._remembered.put(text, n)
        return [counts[text] for text in texts]

    def _count_within(self, texts: list[str], room: int) -> list[int]:
        """Token counts, but a text too long to fit `room` is not tokenized whole (room + 1):
        encoding a 2 MB paragraph at once costs ~200 MB. Such a text is split by lines anyway."""
        longest = room * LONG_TEXT_CHARS_PER_TOKEN
        fitting = [i for i, text in enumerate(texts) if len(text) <= longest]
        counts = [room + 1] * len(texts)
        for i, n in zip(fitting, self._count([texts[i] for i in fitting]), strict=True):
            counts[i] = n
        return counts

    def _pieces(self, section: Section, room: int) -> list[_Piece]:
        blocks = section.blocks
        counts = self._count_within([b.text for b in blocks], room)
        pieces: list[_Piece] = []
        for block, tokens in zip(blocks, counts, strict=True):
            if tokens <= room:
                pieces.append(_Piece(block.start_line, block.end_line, block.text, tokens))
                continue
            lines = block.text.split("\n")
            line_counts = self._count_within(lines, room)
            for offset, (line, line_tokens) in enumerate(zip(lines, line_counts, strict=True)):
                number = block.start_line + offset
                if not line.strip():
                    continue
                if line_tokens <= room:
                    pieces.append(_Piece(number, number, line, line_tokens))
                    continue
                # One line over budget (minified text, a huge table row): split by tokens.
                for window in _windows(line, LONG_LINE_WINDOW):  # bounds the tokenizer's memory
                    for start, end in self.counter.split_by_tokens(window, max(room - 2, 1)):
                        part = window[start:end]
                        if part.strip():
                            pieces.append(_Piece(number, number, part, self._count([part])[0]))
        return pieces

    def _pack(self, pieces: list[_Piece], room: int) -> list[list[_Piece]]:
        groups: list[list[_Piece]] = []
        current: list[_Piece] = []
        used = 0
        for piece in pieces:
            cost = piece.tokens + (1 if current else 0)
            if current and used + cost > room:
                groups.append(current)
                overlap = self._overlap(current, room - piece.tokens)
                current = overlap
                used = sum(p.tokens + 1 for p in overlap)
            current.append(piece)
            used += piece.tokens + (1 if len(current) > 1 else 0)
        if current:
            groups.append(current)
        return groups

    def _overlap(self, previous: list[_Piece], room: int) -> list[_Piece]:
        """Trailing whole pieces of the previous chunk, within the overlap budget."""
        limit = min(self.config.overlap_tokens, room - 1)
        taken: list[_Piece] = []
        total = 0
        for piece in reversed(previous[1:]):
            if total + piece.tokens + 1 > limit:
                break
            taken.insert(0, piece)
            total += piece.tokens + 1
        return taken

    def chunk(self, note: ParsedNote) -> list[Chunk]:
        """Chunks of `note`, in document order."""
        drafts: list[tuple[list[str], list[_Piece], bool]] = []  # (crumb, group, whole section)
        for section in note.sections:
            crumb = [note.title, *section.headings]
            crumb_tokens = self._count([BREADCRUMB_SEP.join(crumb) + "\n\n"])[0]
            if crumb_tokens > self.budget // 3:
                # Absurdly long or deep headings must not crowd out the body.
                crumb = [crumb[0][:60], crumb[-1][:60]] if len(crumb) > 1 else [crumb[0][:60]]
                crumb_tokens = self._count([BREADCRUMB_SEP.join(crumb) + "\n\n"])[0]
                # 60 characters of code or CJK can still be 60 tokens each: a small budget
                # would be all breadcrumb and no body (or over the budget). Cut by tokens.
                while crumb_tokens > self.budget // 3 and any(len(part) > 1 for part in crumb):
                    crumb = [part[: max(len(part) * 2 // 3, 1)] for part in crumb]
                    crumb_tokens = self._count([BREADCRUMB_SEP.join(crumb) + "\n\n"])[0]
            room = max(self.budget - crumb_tokens, 8)
            groups = self._pack(self._pieces(section, room), room)
            for group in groups:
                drafts.append((crumb, group, len(groups) == 1))
        kept = self._merge_tiny(drafts) if note.merge_sections else [(c, g) for c, g, _ in drafts]
        chunks = self._finish(kept, embed_title=not note.title_from_name)
        return self._in_context(chunks, opening_words(note))

    def _in_context(self, chunks: list[Chunk], opening: str) -> list[Chunk]:
        """Every chunk but the first (which holds the opening) embeds the note's opening words,
        as many of `OPENING_TOKENS` as its room under the model's limit allows."""
        if len(chunks) < 2 or not opening:
            return chunks
        token_ends = [end for _, end in self.counter.split_by_tokens(opening, 1)]
        limit = min(self.config.max_tokens, self.counter.max_tokens)
        placed: list[tuple[int, str]] = []
        for index, chunk in enumerate(chunks[1:], start=1):
            take = min(OPENING_TOKENS, len(token_ends), limit - chunk.tokens)
            if take < MIN_OPENING_TOKENS:
                continue
            head = chunk.text[: len(chunk.text) - len(chunk.body)].removesuffix("\n\n")
            placed.append((index, embedded_text(head, chunk.body, opening[: token_ends[take - 1]])))
        counts = self._count_with_specials([self.counter.passage_prefix + text for _, text in placed])
        out = list(chunks)
        for (index, text), tokens in zip(placed, counts, strict=True):
            if tokens <= limit:  # counts are not exactly additive: the rare overshoot goes without
                out[index] = replace(out[index], text=text, hash=text_hash(text), tokens=tokens)
        return out

    def _merge_tiny(self, drafts: list[tuple[list[str], list[_Piece], bool]]) -> list[tuple[list[str], list[_Piece]]]:
        """Merge a tiny section's lone chunk into the next section's first chunk when it fits."""
        merged: list[tuple[list[str], list[_Piece], bool]] = []
        for crumb, group, whole in drafts:
            if merged:
                prev_crumb, prev_group, prev_whole = merged[-1]
                prev_tokens = sum(p.tokens + 1 for p in prev_group)
                tokens = sum(p.tokens + 1 for p in group)
                different_section = prev_crumb != crumb
                # Only a whole section can be tiny: the short last piece of a split section
                # stays apart, or its chunk would span two non-tiny sections.
                tiny = (prev_whole and prev_tokens < self.config.min_tokens) or (
                    whole and tokens < self.config.min_tokens
                )
                common = _common_prefix(prev_crumb, crumb)
                crumb_tokens = len(BREADCRUMB_SEP.join(common).split()) * 2 + 2
                if different_section and tiny and prev_tokens + tokens + crumb_tokens <= self.budget * MERGE_CAP:
                    merged[-1] = (common, prev_group + group, prev_whole and whole)
                    continue
            merged.append((crumb, group, whole))
        return [(crumb, group) for crumb, group, _ in merged]

    def _finish(self, drafts: list[tuple[list[str], list[_Piece]]], embed_title: bool = True) -> list[Chunk]:
        """Assemble chunks. With `embed_title` False (a title taken from the file name), the title
        stays out of the embedded text, so renaming the file re-embeds nothing."""
        chunks: list[Chunk] = []
        texts = []
        for crumb, group in drafts:
            embedded_crumb = BREADCRUMB_SEP.join(crumb if embed_title else crumb[1:])
            body = "\n".join(p.text for p in group)
            texts.append(embedded_text(embedded_crumb, body))
        counts = self._count_with_specials([self.counter.passage_prefix + t for t in texts])
        limit = min(self.config.max_tokens, self.counter.max_tokens)
        for (crumb, group), text, tokens in zip(drafts, texts, counts, strict=True):
            if tokens > limit and len(group) > 1:
                # Token counts are not exactly additive; split the rare overshoot in two.
                half = len(group) // 2
                chunks.extend(self._finish([(crumb, group[:half]), (crumb, group[half:])], embed_title))
                continue
            breadcrumb = BREADCRUMB_SEP.join(crumb)
            body = "\n".join(p.text for p in group)
            chunks.append(
                Chunk(
                    start_line=min(p.start_line for p in group),
                    end_line=max(p.end_line for p in group),
                    breadcrumb=breadcrumb,
                    body=body,
                    text=text,
                    hash=text_hash(text),
                    tokens=tokens,
                )
            )
        return chunks


def _common_prefix(a: list[str], b: list[str]) -> list[str]:
    out = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        out.append(x)
    return out or a[:1]


def _windows(line: str, size: int) -> list[str]:
    """`line` in consecutive parts of at most `size` characters, cut after a space where one is near."""
    parts: list[str] = []
    while len(line) > size:
        cut = line.rfind(" ", size // 2, size) + 1 or size
        parts.append(line[:cut])
        line = line[cut:]
    parts.append(line)
    return parts
