"""Words FTS5's unicode61 tokenizer does not find on its own: the parts of a CamelCase
identifier, and the words of Chinese, Japanese and Korean text.

unicode61 splits on punctuation, so `OTEL_EXPORTER_OTLP_ENDPOINT`, `service.name` and
`kube-state-metrics` are found by their parts already (and as wholes by all their parts). But
`BatchSpanProcessor` is one token, and so is a whole sentence of Chinese or Japanese, written
without spaces: neither is found by a part. The index keeps a column of extra tokens beside the
text (`index_terms`, the FTS `terms` column): each CamelCase identifier's parts and every
character bigram of each CJK run, and each word written against CJK text (`使用Redis缓存`,
`kubectlでpodを見る`: unicode61 reads each as one token, so `redis` and `pod` need their own); the
query side cuts its CJK runs into the same bigrams (`split_cjk`), so a two-character word is one
token and a longer one the bigrams it is made of. A single character is looked for as the start
of a bigram. The text shown, matched for coverage and embedded is unchanged.

Text is compared in Unicode's composed form (`nfc`): a note saved with decomposed accents (`e` +
U+0301, as macOS file names and some editors write them) is found by `résumé` typed as one
character each, and the other way round; diacritics still count (`résumé` is not `resume`).
"""

from __future__ import annotations

import re
import unicodedata

#: Han (with extensions and compatibility ideographs), kana (with half-width katakana), Hangul.
CJK_CHARS = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af"
    "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_HAS_CJK = re.compile(f"[{CJK_CHARS}]")
#: what unicode61 reads as one token: letters and digits, CJK included.
_TOKEN = re.compile(r"[^\W_]+")
#: an identifier with a lower-to-upper step inside (`spanProcessor`, `BatchSpanProcessor`,
#: `HTTPServer`); not a word in capitals or a capitalised word.
_CAMEL = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Za-z][a-z0-9]*(?:[A-Z]+[a-z0-9]+)+[A-Z]*|[A-Z]{2,}[a-z][A-Za-z0-9]*)(?![A-Za-z0-9])"
)
#: the parts of a CamelCase identifier: `HTTPServer` -> HTTP, Server; `OAuth2Client` -> O, Auth2, Client.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")


def nfc(text: str) -> str:
    """`text` in Unicode's composed form (NFC); the same object when it already is."""
    return text if text.isascii() or unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def has_cjk(text: str) -> bool:
    return not text.isascii() and _HAS_CJK.search(text) is not None


def bigrams(run: str) -> list[str]:
    """The overlapping character pairs of a CJK run; a single character stays itself."""
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def split_cjk(term: str) -> list[str]:
    """A query word as the index's tokens: each CJK run in it as its bigrams, the rest of it
    as unicode61 reads it (`東京tower` -> 東京, tower)."""
    if not has_cjk(term):
        return [term]
    out: list[str] = []
    at = 0
    for match in _CJK_RUN.finditer(term):
        if match.start() > at:
            out.append(term[at : match.start()])
        out.extend(bigrams(match.group()))
        at = match.end()
    if at < len(term):
        out.append(term[at:])
    return out


def is_cjk(token: str) -> bool:
    """Whether a token is CJK: found inside text, not as a whole word (CJK has no spaces)."""
    return bool(token) and _HAS_CJK.match(token) is not None


def camel_parts(text: str) -> list[str]:
    """The parts of each distinct CamelCase identifier in `text`, lowercased, an identifier's
    parts in order (`BatchSpanProcessor` -> batch span processor)."""
    if not any(c.isupper() for c in text):
        return []
    seen: dict[str, None] = {}
    for match in _CAMEL.finditer(text):
        seen.setdefault(match.group(), None)
    out: list[str] = []
    for identifier in seen:
        parts = _PART.findall(identifier)
        if len(parts) > 1:
            out.extend(part.lower() for part in parts)
    return out


def glued_words(text: str) -> list[str]:
    """The words written against CJK text without a space, each distinct one once
    (`使用Redis缓存` -> Redis): unicode61 keeps them inside the CJK run's token."""
    seen: dict[str, None] = {}
    for match in _TOKEN.finditer(text):
        token = match.group()
        if has_cjk(token):
            for piece in split_cjk(token):
                if not is_cjk(piece):
                    seen.setdefault(piece, None)
    return list(seen)


def index_terms(*texts: str) -> str:
    """The extra tokens of a chunk's texts for the FTS `terms` column, space-separated:
    CamelCase parts, then the words glued to CJK text, then CJK bigrams (each distinct run once)."""
    words: list[str] = []
    glued: list[str] = []
    runs: dict[str, None] = {}
    for text in texts:
        words.extend(camel_parts(text))
        if has_cjk(text):
            glued.extend(glued_words(text))
            for match in _CJK_RUN.finditer(text):
                runs.setdefault(match.group(), None)
    words.extend(glued)
    for run in runs:
        words.extend(bigrams(run))
    return " ".join(words)
