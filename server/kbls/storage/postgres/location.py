"""`store: postgresql://…` (or `--store`): which database, which root in it, and how it is shown.

A URL is handed to libpq as written, so everything libpq reads works: a `service=` name from
`~/.pg_service.conf` (or `PGSERVICEFILE`), a password from `~/.pgpass` (or `PGPASSFILE`), `PG*`
environment variables, `sslmode=`. A password written in the URL is refused: a `.kbls.yaml` is
committed and a `--store` argument is seen by every user of the machine (`ps`).

`kbls_root=NAME` (kbls's own parameter, taken out before libpq sees the URL) names the root in
the database; without it the root is named by its folder's name, so a CI checkout in
`/builds/team/handbook` and a laptop's `~/src/handbook` read and write the same rows.

A team store named by a workspace's own `.kbls.yaml` (a cloned repository's) is connected to
only when the user trusts its host (`TRUSTED_STORES_VARIABLE`, `require_trusted`): opening a
folder must not send the user's login name, `~/.pgpass` password and queries to a server the
repository's author chose. `--store` and the editor's settings are the user's own choice.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

from kbls.errors import ConfigError

SCHEMES = ("postgresql", "postgres")
#: kbls's own URL parameter: the root's name in the database.
ROOT_PARAMETER = "kbls_root"
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")
#: the environment variable listing the hosts whose team stores a workspace `.kbls.yaml` may name.
TRUSTED_STORES_VARIABLE = "KBLS_TRUSTED_STORES"
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
        # written out, not `urlunsplit`: that drops an empty host's `//`, and libpq reads
        # `postgresql:/?service=kb` as no URL at all
        conninfo = f"{parts.scheme}://{parts.netloc}{parts.path}" + (f"?{rest}" if rest else "")
        return PgLocation(conninfo, name, f"{conninfo} (root {name})")


def store_host(url: str) -> str:
    """What `KBLS_TRUSTED_STORES` names a team store by: its host (the URL's, else its `host=`
    parameter), else `service:NAME` for a `service=` URL, else `localhost` (libpq's default)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if parts.hostname:
        return parts.hostname
    if query.get("host"):
        return query["host"]
    if query.get("service"):
        return f"service:{query['service']}"
    return "localhost"


def trusted_hosts() -> set[str]:
    """The hosts `KBLS_TRUSTED_STORES` lists (comma- or space-separated, compared without case)."""
    return {h.lower() for h in re.split(r"[\s,]+", os.environ.get(TRUSTED_STORES_VARIABLE, "")) if h}


def require_trusted(url: str, setting: str) -> None:
    """:raises ConfigError: a workspace file names a team store whose host the user did not trust."""
    host = store_host(url)
    if host.lower() in trusted_hosts():
        return
    raise ConfigError(
        f"{setting}: {url} is a team store named by the workspace's own config file, and its host {host!r} is "
        f"not one you trust: kbls connects to a database a workspace names only with your consent. To use it, "
        f"set {TRUSTED_STORES_VARIABLE}={host} in the environment the editor (or kbls) starts from, or set "
        f"`store` in your own editor settings (initializationOptions) or pass --store (docs/team.md)"
    )
