"""One logging set-up for the processes kbls runs: `kbls serve`, its relay and `kbls daemon`.

Each process differs only in its line format (and in what it does with pygls's logger), so the
format is a parameter and the level is handed back for the caller's own tuning.
"""

from __future__ import annotations

import logging
import sys


def configure_logging(log_file: str | None, level: str, line_format: str) -> int:
    """Send every log record to `log_file` (stderr when None) at `level`; returns that level.

    An unknown level name is INFO.
    """
    numeric = getattr(logging, str(level).upper(), None)
    if not isinstance(numeric, int):
        numeric = logging.INFO
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(line_format))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    return numeric
