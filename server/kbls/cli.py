"""The `kbls` command line: index, search, related, status, eval, serve and mcp.

Machine-readable output (`--json`) goes to stdout; progress and messages go to stderr.
Exit status: 0 success, 1 runtime problem (store, model), 2 bad usage or configuration.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from kbls import __version__
from kbls.errors import ConfigError, KblsError, ModelMismatchError, OutsideRootError, QueryError
from kbls.results import Hit

if TYPE_CHECKING:
    from kbls.engine import Engine

T = TypeVar("T")


def _store_arg(args: argparse.Namespace) -> Path | str | None:
    """`--store`: a folder, or a team store's URL kept as written (a Path folds its `//`)."""
    from kbls.storage.postgres.location import is_postgres_url

    store: str | None = getattr(args, "store", None)
    if not store:
        return None
    return store if is_postgres_url(store) else Path(store)


@contextmanager
def _engine(
    args: argparse.Namespace, check_store: bool = False, read_only: bool = False, ingest: bool = False
) -> Iterator[Engine]:
    """The root's engine for one command, closed after it; `ingest`: it may write a team store."""
    from kbls.engine import Engine

    engine = Engine(
        Path(args.root), store_dir=_store_arg(args), check_store=check_store, read_only=read_only, ingest=ingest
    )
    try:
        if engine.notice:
            print(f"kbls: {engine.notice}", file=sys.stderr)
        yield engine
    finally:
        engine.close()


def _emit(value: Any) -> None:
    sys.stdout.write(json.dumps(msgspec.to_builtins(value), ensure_ascii=False, indent=2) + "\n")


def cmd_index(args: argparse.Namespace) -> int:
    from kbls.engine import Engine

    if args.rebuild:
        removed = Engine.rebuild(Path(args.root), _store_arg(args))
        print(f"kbls: removed the store in {removed}; rebuilding", file=sys.stderr)
    from kbls.index_progress import IndexProgressOutput

    with IndexProgressOutput(sys.stderr) as progress, _engine(args, check_store=True, ingest=True) as engine:
        report = engine.index(force=args.force, progress=progress)
    if args.json:
        _emit(report)
        return 0
    print(
        f"{report.files} files, {report.chunks} chunks in the store; {report.changed} files written, "
        f"{report.deleted} deleted, {report.embedded} chunks embedded, {report.reused} reused "
        f"in {report.seconds:.1f}s",
        file=sys.stderr,
    )
    for skipped in report.skipped:
        print(f"  {skipped.path}: {skipped.reason}", file=sys.stderr)
    return 0


def _show_hits(args: argparse.Namespace, hits: Sequence[Hit]) -> None:
    """JSON with `--json`, else one numbered line (and its snippet) a hit."""
    if args.json:
        _emit(hits)
        return
    for i, hit in enumerate(hits, 1):
        reasons = f"  ({'; '.join(hit.reasons)})" if hit.reasons else ""
        print(f"{i:2}. {hit.path}:{hit.start_line + 1}-{hit.end_line + 1}  {hit.breadcrumb}  [{hit.score:.2f}]{reasons}")
        if hit.snippet:
            print(f"    {hit.snippet}")
        if hit.explain is not None:
            print(f"    {hit.explain.describe()}")


def _ask_daemon(args: argparse.Namespace, method: str, query: Any, reply: type[T]) -> T | None:
    """A running per-user daemon's answer (its warm engine) for a store folder; None when there
    is none, and for a team store, which is read in-process."""
    from kbls.userdaemon import client

    return None if isinstance(_store_arg(args), str) else client.ask(method, query, reply)


def _daemon_root(args: argparse.Namespace) -> dict[str, Any]:
    """The root and store of a CLI query to the per-user daemon (kbls.userdaemon.queries)."""
    return {"root": str(Path(args.root).absolute()), "store": str(Path(args.store).absolute()) if args.store else None}


def cmd_search(args: argparse.Namespace) -> int:
    from kbls.userdaemon import queries

    query = queries.SearchQuery(
        **_daemon_root(args), query=args.query, limit=args.limit, mode=args.mode, group_by_file=args.group_by_file,
        explain=args.explain,
    )
    reply = _ask_daemon(args, queries.SEARCH, query, queries.SearchReply)
    if reply is not None:
        hits, empty_store, root = reply.hits, reply.empty_store, Path(args.root).resolve()
    else:
        with _engine(args, read_only=True) as engine:
            result = engine.search(
                args.query, limit=args.limit, mode=args.mode, group_by_file=args.group_by_file, explain=args.explain
            )
            hits, empty_store, root = result.hits, not result.hits and engine.store.counts().files == 0, engine.root
    _show_hits(args, hits)
    if not args.json:
        if empty_store:
            print(f"kbls: the index of {root} is empty; run `kbls index` first", file=sys.stderr)
        elif not hits:
            print("nothing found", file=sys.stderr)
    return 0


def cmd_related(args: argparse.Namespace) -> int:
    target, _, line = args.file.rpartition(":")
    if not target or not line.isdigit():
        target, line = args.file, ""
    if line and int(line) < 1:  # it became line -1: silently no section, no hits
        raise QueryError(f"{args.file}: line numbers start at 1")
    from kbls.userdaemon import queries

    path = Path(target)
    if not path.is_absolute():
        path = Path.cwd() / path
    query = queries.RelatedQuery(
        **_daemon_root(args), path=str(path), line=int(line) - 1 if line else None, limit=args.limit
    )
    reply = _ask_daemon(args, queries.RELATED, query, queries.RelatedReply)
    if reply is not None:
        hits = reply.hits
    else:
        with _engine(args, read_only=True) as engine:
            hits = engine.related(path, query.line, limit=args.limit)
    _show_hits(args, hits)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from kbls.userdaemon import queries

    reply = _ask_daemon(args, queries.STATUS, queries.RootQuery(**_daemon_root(args)), queries.StatusReply)
    if reply is not None:
        status = reply.status
    else:
        with _engine(args, read_only=True) as engine:
            status = engine.status()
    if args.json:
        _emit(status)
        return 0
    print(f"root:      {status.root}")
    print(f"store:     {status.store} ({status.store_bytes / 1e6:.1f} MB)")
    print(f"files:     {status.files}")
    print(f"chunks:    {status.chunks} ({status.vectors} distinct vectors)")
    print(f"model:     {status.model} ({status.dimension}-d)")
    if status.sqlite.module == "postgresql":
        print(f"backend:   PostgreSQL {status.sqlite.version}, {status.sqlite.vec}")
    else:
        print(f"sqlite:    {status.sqlite.module} {status.sqlite.version}, sqlite-vec {status.sqlite.vec}")
    print(f"problems:  {len(status.errors)}")
    for problem in status.errors:
        print(f"  {problem.path}: {problem.reason}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from kbls.evaluate import evaluate, format_table, read_queries

    try:  # before any indexing: a missing or malformed file is a usage error, not a traceback
        read_queries(Path(args.queries))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise QueryError(f"cannot read the queries {args.queries}: {exc}") from None
    with _engine(args, ingest=not args.no_index) as engine:
        if not args.no_index:
            engine.index()
        report = evaluate(engine, Path(args.queries), k=10)
    if args.json:
        _emit(report)
    else:
        print(format_table(report))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    if not (args.tcp or args.standalone):
        from kbls.userdaemon.serve import serve_through_daemon

        relayed = serve_through_daemon(args.log_file, args.log_level)
        if relayed is not None:
            return relayed
    from kbls.lsp.main import serve

    return serve(tcp=args.tcp, log_file=args.log_file, log_level=args.log_level) or 0


def cmd_daemon(args: argparse.Namespace) -> int:
    from kbls.userdaemon.main import run

    return run(idle=args.idle_minutes, log_file=args.log_file, log_level=args.log_level)


def cmd_mcp(args: argparse.Namespace) -> int:
    from kbls.mcp.daemon_backend import DaemonBackend
    from kbls.mcp.local import LocalBackend
    from kbls.mcp.server import serve_stdio

    roots = [Path(root).expanduser() for root in args.root]  # agent hosts run it without a shell
    if args.store and len(roots) != 1:
        raise ConfigError("--store needs exactly one --root (each root has its own store)")
    store = _store_arg(args)
    store_dirs = {roots[0]: store.expanduser() if isinstance(store, Path) else store} if store else None
    if bool(args.http) != bool(args.token_file):
        raise ConfigError("--http HOST:PORT and --token-file FILE go together: every HTTP request must carry the token")
    backend = DaemonBackend(LocalBackend(store_dirs))  # the daemon's roots, else in-process
    if args.http:
        from kbls.mcp.http import serve_http

        return serve_http(backend, roots, args.http, Path(args.token_file).expanduser())
    return serve_stdio(backend, roots)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kbls", description="Semantic search over the notes in a workspace.")
    parser.add_argument("--version", action="version", version=f"kbls {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser, json_flag: bool = True) -> None:
        p.add_argument("--root", default=".", help="workspace root (default: the current folder)")
        p.add_argument("--store", help="store directory (default: config `store`, else the user cache)")
        if json_flag:
            p.add_argument("--json", action="store_true", help="machine-readable output on stdout")

    p = sub.add_parser("index", help="index the workspace incrementally")
    common(p)
    p.add_argument("--force", action="store_true", help="re-read every file (stored vectors are reused)")
    p.add_argument("--rebuild", action="store_true", help="delete the store first (e.g. after changing model)")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search the index")
    p.add_argument("query")
    common(p)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--mode", choices=("hybrid", "semantic", "lexical"), default=None)
    p.add_argument("--group-by-file", action="store_true", help="one hit per file")
    p.add_argument("--explain", action="store_true", help="show each signal's score and weight behind each hit")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("related", help="notes related to FILE (or the section at FILE:LINE, 1-based)")
    p.add_argument("file")
    common(p)
    p.add_argument("--limit", type=int, default=10)
    p.set_defaults(func=cmd_related)

    p = sub.add_parser("status", help="what the store holds")
    common(p)
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("eval", help="Recall@10, MRR@10 and nDCG@10 of each mode on a TSV of queries")
    p.add_argument("queries", help="TSV with header `query<TAB>relevant`, relevant paths `|`-separated")
    common(p)
    p.add_argument("--no-index", action="store_true", help="do not bring the index up to date first")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("serve", help="run the language server (stdio)")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (loopback by default)")
    p.add_argument("--log-file", help="write the full log here")
    p.add_argument("--log-level", default="INFO")
    p.add_argument("--stdio", action="store_true", help="use stdio (the default; accepted for editors)")
    p.add_argument(
        "--standalone", action="store_true",
        help="serve from this process instead of relaying to the per-user daemon (also: KBLS_NO_DAEMON=1)",
    )
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "daemon", help="run the per-user daemon that kbls serve relays to (started by kbls serve when absent)",
        description="One warm kbls per user: it owns the model, the engines and the index queue and serves every "
        "editor window (through kbls serve), the command line and kbls mcp over a private unix socket. "
        "It exits after --idle-minutes with no client.",
    )
    p.add_argument("--idle-minutes", type=float, default=None, help="exit after this long with no client "
                   "(default: KBLS_DAEMON_IDLE_MINUTES, else 10)")
    p.add_argument("--log-file", help="write the log here (default: the daemon's log in its runtime folder)")
    p.add_argument("--log-level", default="INFO")
    p.set_defaults(func=cmd_daemon)

    p = sub.add_parser(
        "mcp",
        help="run an MCP server (stdio, or HTTP with --http) with search, related, read_note and status tools for AI agents",
        description="An MCP server over stdio (or streamable HTTP with --http and a bearer token) for agent hosts."
        " It reads the roots' existing indexes and never "
        "writes; roots come from --root, else from the client's roots, else the current folder.",
    )
    p.add_argument("--root", action="append", default=[], metavar="DIR", help="a root to serve (repeatable)")
    p.add_argument("--store", help="store directory of the one --root (default: its config `store`, else the user cache)")
    p.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP on HOST:PORT instead of stdio (needs --token-file)")
    p.add_argument(
        "--token-file", metavar="FILE", help="with --http: the bearer token every request must carry (a file only you can read)"
    )
    p.set_defaults(func=cmd_mcp)
    return parser


def _check_root(args: argparse.Namespace) -> None:
    """A `--root` that is no folder is a usage error: a typo indexed nothing, exited 0 and left
    an empty store in the user cache (`search` said "the index is empty")."""
    root = Path(args.root)
    if not root.is_dir():
        what = "is not a folder" if root.exists() else "does not exist"
        raise ConfigError(f"--root {args.root}: {root.absolute()} {what}")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command not in ("serve", "mcp", "daemon"):
        logging.basicConfig(level=logging.WARNING, format="kbls: %(message)s", stream=sys.stderr)
    command: Callable[[argparse.Namespace], int] = args.func
    try:
        if getattr(args, "store", None):
            from kbls.config import refuse_url

            refuse_url(args.store, "--store")  # before a Path folds its `//`
        if args.command in ("index", "search", "related", "status", "eval"):
            _check_root(args)
        return command(args)
    except (ConfigError, QueryError, OutsideRootError) as exc:
        print(f"kbls: {exc}", file=sys.stderr)
        return 2
    except ModelMismatchError as exc:
        print(f"kbls: {exc}", file=sys.stderr)
        return 1
    except KblsError as exc:
        print(f"kbls: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # Ctrl-C: each note is written in a transaction of its own, so nothing written is lost.
        if args.command in ("index", "eval"):
            print("\nkbls: interrupted; the notes indexed so far are kept: run it again to finish", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
