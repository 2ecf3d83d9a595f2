"""Workspace configuration: an optional `.kbls.yaml` at a root, validated into msgspec structs.

Defaults serve without any file. A wrong key or type raises `ConfigError` naming the file, the
key and what was expected, so a user can fix it without reading code.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import sys
import typing
from pathlib import Path
from typing import Any, Literal

import msgspec
import yaml
from pathspec.patterns.gitignore import GitIgnorePatternError

from kbls.errors import ConfigError
from kbls.query.globs import glob_spec
from kbls.storage.postgres.location import PgLocation, is_postgres_url, is_url, require_trusted

CONFIG_FILE = ".kbls.yaml"
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

SearchMode = Literal["hybrid", "semantic", "lexical"]
#: how a problem is shown in the editor (LSP's diagnostic severities), or not at all.
Severity = Literal["error", "warning", "information", "hint", "off"]


class ModelConfig(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    #: fastembed model name; the default is the bundled offline int8 MiniLM.
    name: str = DEFAULT_MODEL
    #: chunks per embedding call: bounds memory while indexing.
    batch_size: int = 32
    #: ONNX runtime threads; None lets onnxruntime decide.
    threads: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.batch_size <= 1024:
            raise ValueError("model.batch_size: expected an integer from 1 to 1024")
        if self.threads is not None and not 1 <= self.threads <= 256:
            raise ValueError("model.threads: expected an integer from 1 to 256, or null")


class ChunkConfig(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    #: token budget of one chunk, including title and breadcrumb; clamped to the model's limit.
    max_tokens: int = 256
    #: tokens of the previous piece repeated when one section must be split.
    overlap_tokens: int = 32
    #: sections smaller than this are merged with their neighbour.
    min_tokens: int = 48

    def __post_init__(self) -> None:
        if not 32 <= self.max_tokens <= 8192:
            raise ValueError("chunk.max_tokens: expected an integer from 32 to 8192")
        if not 0 <= self.overlap_tokens < self.max_tokens // 2:
            raise ValueError("chunk.overlap_tokens: expected an integer from 0 to half of max_tokens")
        if not 0 <= self.min_tokens < self.max_tokens:
            raise ValueError("chunk.min_tokens: expected an integer from 0 to below max_tokens")


class RerankConfig(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    #: a fastembed TextCrossEncoder model name; None: no reranking.
    model: str | None = None
    #: a folder holding that model's files (model.onnx, tokenizer.json...) instead of a download.
    path: str | None = None
    #: how many of the best chunks the cross-encoder re-orders.
    candidates: int = 30

    def __post_init__(self) -> None:
        if not 1 <= self.candidates <= 200:
            raise ValueError("search.rerank.candidates: expected an integer from 1 to 200")


class SearchConfig(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    mode: SearchMode = "hybrid"
    limit: int = 10
    #: reciprocal rank fusion constant: score = sum(weight / (rrf_k + rank)).
    rrf_k: int = 60
    #: share of each signal in the fused score (normalised to sum to 1).
    semantic_weight: float = 0.75
    lexical_weight: float = 0.25
    #: hits whose confidence (0..1, see docs/configuration.md) is below this are not shown.
    min_score: float = 0.26
    rerank: RerankConfig = msgspec.field(default_factory=RerankConfig)

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= 200:
            raise ValueError("search.limit: expected an integer from 1 to 200")
        if self.rrf_k < 1:
            raise ValueError("search.rrf_k: expected a positive integer")
        # NaN passes `< 0` and `.inf` makes the normalised weights NaN: every score NaN, no hit.
        weights = (self.semantic_weight, self.lexical_weight)
        if not all(math.isfinite(w) and w >= 0 for w in weights):
            raise ValueError("search.semantic_weight/lexical_weight: expected finite numbers >= 0")
        if not 0.0 <= self.min_score <= 1.0:
            raise ValueError("search.min_score: expected a number from 0 to 1")


class DiagnosticsConfig(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """The severity of each problem the editor is told about in an open note (never in code)."""

    #: a link to no note (nor any file of the root).
    missing_note: Severity = "warning"
    #: a link to a note that exists, at a heading it does not have.
    missing_heading: Severity = "warning"
    #: a wiki name that several notes answer to.
    ambiguous: Severity = "warning"
    #: a markdown link whose path leaves the root (or a symlink that leads out of it).
    outside_root: Severity = "warning"
    #: another note's title or alias written in plain text, not linked (the code action offers the link).
    unlinked_mention: Severity = "off"


#: Text files of code projects that match `**/*.txt` or `**/*.rst` but are not notes.
DEFAULT_EXCLUDE: tuple[str, ...] = (
    "**/requirements*.txt",
    "**/constraints*.txt",
    "**/CMakeLists.txt",
    "**/CMakeCache.txt",
    "**/LICENSE*",
    "**/COPYING*",
    "**/robots.txt",
    "**/*.egg-info/",
    "**/site-packages/",
    "**/.venv/",
    "**/venv/",
)


class Config(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    #: gitignore-style patterns of files to index.
    #: org-mode is on by default (notes, as cheap as markdown); PDF and saved web pages are off
    #: (a folder of manuals or a docs build is large and slow to embed): add `**/*.pdf`,
    #: `**/*.html` to turn them on.
    include: list[str] = msgspec.field(
        default_factory=lambda: ["**/*.md", "**/*.markdown", "**/*.txt", "**/*.rst", "**/*.org"]
    )
    #: gitignore-style patterns to skip, on top of .git/, node_modules/ and the store. The default
    #: leaves out text files that code projects carry and that are never notes (`**/*.txt` would
    #: otherwise take requirements.txt and CMakeLists.txt); setting `exclude` replaces it.
    exclude: list[str] = msgspec.field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    #: skip what the root's .gitignore files ignore.
    respect_gitignore: bool = True
    #: store directory, outside the root; relative paths resolve against the config file's folder.
    store: str | None = None
    #: files larger than this are skipped with a reason.
    max_file_bytes: int = 2_000_000
    #: the cap for a PDF (its bytes are mostly fonts and images, not text); larger ones are skipped.
    max_pdf_bytes: int = 50_000_000
    #: the cap for a saved web page `.html`/`.htm` (scripts and styles inline).
    max_html_bytes: int = 10_000_000
    model: ModelConfig = msgspec.field(default_factory=ModelConfig)
    chunk: ChunkConfig = msgspec.field(default_factory=ChunkConfig)
    search: SearchConfig = msgspec.field(default_factory=SearchConfig)
    diagnostics: DiagnosticsConfig = msgspec.field(default_factory=DiagnosticsConfig)

    def __post_init__(self) -> None:
        if not 1 <= self.max_file_bytes <= 1_000_000_000:
            raise ValueError("max_file_bytes: expected an integer from 1 to 1000000000")
        for key in ("max_pdf_bytes", "max_html_bytes"):
            if not 1 <= getattr(self, key) <= 1_000_000_000:
                raise ValueError(f"{key}: expected an integer from 1 to 1000000000")
        for key, patterns in (("include", self.include), ("exclude", self.exclude)):
            _check_patterns(key, patterns)

    def size_cap(self, rel_path: str) -> tuple[str, int]:
        """(setting, bytes) that caps the size of the file at `rel_path`, by its kind."""
        lower = rel_path.lower()
        if lower.endswith(".pdf"):
            return "max_pdf_bytes", self.max_pdf_bytes
        if lower.endswith((".html", ".htm")):
            return "max_html_bytes", self.max_html_bytes
        return "max_file_bytes", self.max_file_bytes


def _check_patterns(key: str, patterns: list[str]) -> None:
    """Raise ValueError naming `key` and the first pattern pathspec cannot compile (`foo\\`, `[z-a]`):
    it would otherwise fail every scan with a traceback."""
    try:
        glob_spec(patterns)
    except (GitIgnorePatternError, re.error):
        for pattern in patterns:
            try:
                glob_spec([pattern])
            except (GitIgnorePatternError, re.error) as exc:
                raise ValueError(f"{key}: {pattern!r} is not a valid pattern ({exc}); expected gitignore-style globs") from None
        raise


def _snake(key: str) -> str:
    """initializationOptions arrive camelCase from editors; the YAML file uses snake_case."""
    out = []
    for ch in key:
        if ch.isupper():
            out.append("_" + ch.lower())
        else:
            out.append(ch)
    return "".join(out).replace("-", "_")


def _normalise_keys(value: Any, _seen: dict[int, Any] | None = None) -> Any:
    # YAML aliases share one node: convert each mapping once, so a billion-laughs file stays
    # linear and a mapping that contains itself does not recurse forever.
    if isinstance(value, dict):
        seen = {} if _seen is None else _seen
        if id(value) in seen:
            return seen[id(value)]
        out: dict[str, Any] = {}
        seen[id(value)] = out
        for k, v in value.items():
            out[_snake(str(k))] = _normalise_keys(v, seen)
        return out
    return value


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


_UNKNOWN_KEY = re.compile(r"unknown field `[^`]*`(?: - at `\$\.?([^`]*)`)?")
_BAD_ENUM = re.compile(r"Invalid enum value .* - at `\$\.([^`]*)`")


def _field_type(path: str) -> Any:
    """The declared type at a dotted path of `Config` ("" is Config itself), or None."""
    kind: Any = Config
    for part in filter(None, path.split(".")):
        try:
            kind = typing.get_type_hints(kind).get(part)
        except TypeError:
            return None
    return kind


def _expected(message: str) -> str:
    """What msgspec leaves out for a wrong key or enum value: the keys or values allowed."""
    unknown, enum = _UNKNOWN_KEY.search(message), _BAD_ENUM.search(message)
    if unknown:
        fields = getattr(_field_type(unknown.group(1) or ""), "__struct_fields__", ())
        return f"; expected one of: {', '.join(fields)}" if fields else ""
    if enum:
        values = typing.get_args(_field_type(enum.group(1)))
        return f"; expected one of: {', '.join(map(str, values))}" if values else ""
    return ""


def _convert(raw: dict[str, Any], source: str) -> Config:
    try:
        return msgspec.convert(raw, Config)
    except msgspec.ValidationError as exc:
        # msgspec says e.g. "Expected `int`, got `str` - at `$.model.batch_size`".
        message = str(exc) + _expected(str(exc))
        message = message.replace("$.", "").replace("`$`", "the top level")
        raise ConfigError(f"{source}: {message}") from None
    except ValueError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def load_config(
    root: Path, overrides: dict[str, Any] | None = None, *, store_given: bool = False
) -> tuple[Config, Path | None]:
    """Read `root/.kbls.yaml` (if any), apply editor overrides, validate.

    :param store_given: the caller has its own store (`--store`), so the file's is not used.
    :returns: the config and the config file's path (None when there is none).
    :raises ConfigError: naming the file and key for any invalid value, or the file's own team
        store on a host the user does not trust (`require_trusted`)."""
    path = root / CONFIG_FILE
    raw: dict[str, Any] = {}
    config_path: Path | None = None
    if path.is_file():
        config_path = path
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
        except RecursionError:  # PyYAML composes nested collections recursively
            raise ConfigError(f"{path}: not valid YAML: nested too deeply") from None
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            # PyYAML's constructors raise these for a value they cannot build: `2024-02-30`,
            # `!!int abc`, `!!bool maybe`.
            raise ConfigError(f"{path}: not valid YAML: a value YAML cannot read ({type(exc).__name__}: {exc})") from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: expected a mapping of keys at the top level")
        raw = _normalise_keys(loaded)
        _convert(raw, str(path))  # name the file when the file itself is wrong
    user = _normalise_keys(overrides) if overrides else {}
    store = raw.get("store")
    if not store_given and "store" not in user and isinstance(store, str) and is_postgres_url(store):
        require_trusted(store, f"{path}: store")
    if user:
        return _convert(_merge(raw, user), f"{path} + initializationOptions"), config_path
    return _convert(raw, str(path)), config_path


def _outside_the_root(store: Path, root: Path, setting: str, fix: str) -> Path:
    """`store` (resolved), unless it is the root, above it or inside it; `fix` says what to do.

    A store inside the root is seen by the root's file watcher on every write, and swept up by
    sync tools, git and any other root that contains this one; the root itself or a folder above
    it would leave the scan nothing to index (the scan leaves out the store's folder).
    """
    if store == root:
        where = "is the workspace root itself"
    elif store in root.parents:
        where = f"contains the workspace root {root}"
    elif root in store.parents:
        where = (
            f"is inside the workspace root {root}, where the file watcher would see each of its "
            f"writes and sync tools and git would pick it up"
        )
    else:
        return store
    raise ConfigError(f"{setting}: the store folder {store} {where}; {fix}")


def user_cache_dir() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "kbls"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / "kbls"
    cache_home = os.environ.get("XDG_CACHE_HOME", "")
    # A relative XDG_CACHE_HOME is invalid (XDG spec): the daemon (cwd /) and its relay would
    # read it as two different folders and hash two different socket names.
    return (Path(cache_home) if os.path.isabs(cache_home) else Path.home() / ".cache") / "kbls"


def refuse_url(store: str, setting: str) -> None:
    """A store written as a URL of a scheme kbls has no backend for is an error: read as a folder,
    `https://h/x` became a folder `https:` in the working directory. `postgresql://` (and
    `postgres://`) is the team store (`kbls.storage.postgres`)."""
    if is_url(store) and not is_postgres_url(store):
        scheme = store.split(":", 1)[0]
        raise ConfigError(
            f"{setting}: {store} is a URL of a scheme kbls has no backend for (`{scheme}:`); a store is a "
            f"folder, or a team store `postgresql://…` (docs/team.md)"
        )


def resolve_store(root: Path, config: Config, explicit: str | Path | None = None) -> Path | PgLocation:
    """Where the root's store lives: a folder (`resolve_store_dir`), or a team store when
    `--store` or `store:` is a `postgresql://` URL.

    :raises ConfigError: a URL of another scheme, a password in the URL, or a bad folder.
    """
    if isinstance(explicit, str) and is_postgres_url(explicit):
        return PgLocation.parse(explicit, root, "--store")
    if explicit is None and config.store and is_postgres_url(config.store):
        return PgLocation.parse(config.store, root, f"{root / CONFIG_FILE}: store")
    return resolve_store_dir(root, config, Path(explicit) if isinstance(explicit, str) else explicit)


def _refuse_any_url(store: str, setting: str) -> None:
    """Where a folder is needed, a team store URL is an error too (it names no folder)."""
    refuse_url(store, setting)
    if is_postgres_url(store):
        raise ConfigError(f"{setting}: {store} is a team store, and this needs a store folder")


def resolve_store_dir(root: Path, config: Config, explicit: Path | None = None) -> Path:
    """Where the root's store lives: --store, then config `store`, then the user cache dir.

    :raises ConfigError: `--store` or `store:` is a URL, or names the root itself, a folder above
        it or a folder inside it (symlinks resolved): see `_outside_the_root`.
    """
    root = root.resolve()
    sibling = f"{root.name or 'notes'}-kbls"
    if explicit is not None:
        _refuse_any_url(str(explicit), "--store")
        fix = (
            f"leave --store out to use the `store:` setting or the per-user cache folder, or name "
            f"a folder outside the root, e.g. `--store {root.parent / sibling}`"
        )
        return _outside_the_root(explicit.expanduser().resolve(), root, f"--store {explicit}", fix)
    if config.store:
        _refuse_any_url(config.store, f"{root / CONFIG_FILE}: store")
        store = Path(config.store).expanduser()
        resolved = (store if store.is_absolute() else root / store).resolve()
        fix = (
            f"leave `store:` out to use the per-user cache folder, or name a folder outside the "
            f"root, e.g. `store: ../{sibling}`"
        )
        return _outside_the_root(resolved, root, f"{root / CONFIG_FILE}: store: {config.store}", fix)
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    return user_cache_dir() / f"{root.name or 'root'}-{digest}"
