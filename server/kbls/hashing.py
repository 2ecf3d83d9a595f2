"""The one content hash of kbls: BLAKE2b, hex. Files are re-parsed when their hash changes,
chunks re-embedded when theirs does, and the store keys vectors by the chunk hash.

Model files are named by their SHA-256 instead (`file_sha256`): the digest model publishers
print, which a user can check against theirs."""

from __future__ import annotations

import hashlib
from pathlib import Path

#: bytes of digest: 128 bits make an accidental collision between two chunk texts negligible.
DIGEST_BYTES = 16


def content_hash(data: bytes, digest_bytes: int = DIGEST_BYTES) -> str:
    """BLAKE2b of `data` as hex (`2 * digest_bytes` characters)."""
    return hashlib.blake2b(data, digest_size=digest_bytes).hexdigest()


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes as hex, read a megabyte at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
