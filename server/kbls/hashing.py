"""The one content hash of kbls: BLAKE2b, hex. Files are re-parsed when their hash changes,
chunks re-embedded when theirs does, and the store keys vectors by the chunk hash."""

from __future__ import annotations

import hashlib

#: bytes of digest: 128 bits make an accidental collision between two chunk texts negligible.
DIGEST_BYTES = 16


def content_hash(data: bytes, digest_bytes: int = DIGEST_BYTES) -> str:
    """BLAKE2b of `data` as hex (`2 * digest_bytes` characters)."""
    return hashlib.blake2b(data, digest_size=digest_bytes).hexdigest()
