"""Draws media/icon.png (128x128): a note page and a magnifier on a rounded tile. Standard library only.

Run from vscode-extension/: python3 scripts/make-icon.py
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

SIZE, SS = 128, 4  # output size, supersampling factor per axis
BG = (31, 94, 120)
PAGE = (246, 244, 236)
LINE = (120, 140, 150)
LENS = (255, 190, 60)


def inside_round_rect(x: float, y: float, x0: float, y0: float, x1: float, y1: float, r: float) -> bool:
    cx = min(max(x, x0 + r), x1 - r)
    cy = min(max(y, y0 + r), y1 - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def colour_at(x: float, y: float) -> tuple[int, int, int, int]:
    if not inside_round_rect(x, y, 2, 2, 126, 126, 24):
        return (0, 0, 0, 0)
    rgb = BG
    # The page, with a folded corner and text lines.
    if inside_round_rect(x, y, 24, 18, 84, 100, 5) and not (x + (18 - y) > 84 - 16 and x > 68 and y < 34):
        rgb = PAGE
        for i, ly in enumerate((36, 48, 60, 72)):
            width = 44 if i % 2 == 0 else 34
            if 33 <= x <= 33 + width and ly <= y <= ly + 4:
                rgb = LINE
    # The magnifier: a ring and a handle.
    d = math.hypot(x - 80, y - 76)
    if 15 <= d <= 24:
        rgb = LENS
    hx, hy = x - 80, y - 76
    along = (hx + hy) / math.sqrt(2)
    across = abs(hx - hy) / math.sqrt(2)
    if 23 <= along <= 44 and across <= 5.5:
        rgb = LENS
    return (*rgb, 255)


def main() -> None:
    rows = []
    for py in range(SIZE):
        row = bytearray([0])  # filter: none
        for px in range(SIZE):
            acc = [0, 0, 0, 0]
            for sy in range(SS):
                for sx in range(SS):
                    c = colour_at(px + (sx + 0.5) / SS, py + (sy + 0.5) / SS)
                    for k in range(3):
                        acc[k] += c[k] * c[3]
                    acc[3] += c[3]
            alpha = acc[3] / (SS * SS)
            rgb = [round(acc[k] / acc[3]) if acc[3] else 0 for k in range(3)]
            row += bytes([*rgb, round(alpha)])
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
    png += chunk(b"IEND", b"")
    out = Path(__file__).resolve().parent.parent / "media" / "icon.png"
    out.write_bytes(png)
    print(f"{out} ({len(png)} bytes)")


if __name__ == "__main__":
    main()
