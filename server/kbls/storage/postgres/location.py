"""`store: postgresql://…` (or `--store`): which database, which root in it, and how it is shown.

A URL is handed to libpq as written, so everything libpq reads works: a `service=` name from
`~/.pg_service.conf` (or `PGSERVICEFILE`), a password from `~/.pgpass` (or `PGPASSFILE`), `PG*`
environment variables, `sslmode=`. A password written in the URL is refused: a `.kbls.yaml` is
committed and a `--store` argument is seen by every user of the machine (`ps`).

`kbls_root=NAME` (kbls's own parameter, taken out before libpq sees the URL) names the root in
the database; without it the root is named by its folder's name, so a CI checkout in
`/builds/team/handbook` and a laptop's `~/src/handbook` read and write the same rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from kbls.errors import ConfigError

SCHEMES = ("postgresql", "postgres")
#: kbls's own URL parameter: the root's name in the database.
ROOT_PARAMETER = "kbls_root"
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")
_ROOT_NAME = re.compile(r"^[^\x00-\x1f]{1,200}$")


def is_url(store: str) -> bool:
    """`store` is written as a URL (`scheme:/…`); `C:/notes` is a Windows drive, not a URL."""
    return bool(_URL.match(store))


def is_postgres_url(store: str) -> bool:
    return is_url(store) and store.split(":", 1)[0].lower() in SCHEMES


@dataclass(frozen=True)
class PgLocation:
    """A team store: the libpq connection string and the root's name in the database."""

    #: what libpq connects with (kbls's parameter taken out).
    conninfo: str
    root_name: str
    #: the URL without any password, for messages and `kbls status`.
    display: str

    @staticmethod
    def parse(url: str, root: Path, setting: str) -> PgLocation:
        """:raises ConfigError: not a postgresql:// URL, a password in it, or a bad root name."""
        if not is_postgres_url(url):
            raise ConfigError(f"{setting}: {url} is not a postgresql:// URL")
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        if parts.password or any(key == "password" and value for key, value in query):
            raise ConfigError(
                f"{setting}: the store URL holds a password; kbls never keeps one in a setting or on the "
                "command line: put it in ~/.pgpass (or the file PGPASSFILE names) or in a libpq service file "
                "(`postgresql:///?service=NAME`), see docs/team.md"
            )
        names = [value for key, value in query if key == ROOT_PARAMETER]
        name = names[-1] if names else root.name
        if not _ROOT_NAME.match(name):
            raise ConfigError(f"{setting}: {ROOT_PARAMETER}={name!r} is not a usable root name")
        rest = urlencode([(k, v) for k, v in query if k != ROOT_PARAMETER])
        conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment))
        return PgLocation(conninfo, name, f"{conninfo} (root {name})")
