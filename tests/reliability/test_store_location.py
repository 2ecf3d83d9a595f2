"""Issue 14: a store folder inside, equal to or above the workspace root is a config error.

A store inside the root is seen by the root's file watcher on every write and swept up by sync
tools, git and any other root that contains this one; the root itself or a folder above it left
the scan nothing to index (it indexed 0 files and exited 0). `store:` in `.kbls.yaml` and
`--store` are checked after symlinks are resolved, and every entry point says so in one message
naming the setting, the folder, the root and the fix, and creates nothing: each CLI command
(exit 2), `kbls serve` standalone and through the per-user daemon (`window/showMessage`), and
`kbls mcp` (the root's status message and a tool error).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from tests.support.corpus import write_config
from tests.support.lsp_client import LspSession
from tests.support.processes import KBLS, assert_no_traceback, child_env, run_kbls
from tests.support.user_daemon import DaemonEnv
from tests.userdaemon.conftest import daemon_env  # noqa: F401  (the per-user daemon fixture)

from kbls.config import CONFIG_FILE, load_config, resolve_store, resolve_store_dir
from kbls.errors import ConfigError
from kbls.protocol.wire import StatusResult

INSIDE = "is inside the workspace root"
ITSELF = "is the workspace root itself"
ABOVE = "contains the workspace root"
#: what the message tells a user to do about `store:`
FIX_SETTING = ("leave `store:` out to use the per-user cache folder", "`store: ../notes-kbls`")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """`tmp_path/notes` with one note and an empty `sub/deeper/` folder."""
    root = tmp_path / "notes"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "a.md").write_text("# Tides\n\nThe moon pulls the sea into two bulges.\n")
    return root


def _refusal(root: Path, setting: str) -> str:
    """The ConfigError message for `store: <setting>` at `root`; fails if it is accepted."""
    (root / CONFIG_FILE).write_text(f"store: {setting}\n")
    config, _ = load_config(root)
    with pytest.raises(ConfigError) as caught:
        resolve_store_dir(root, config)
    return str(caught.value)


@pytest.mark.parametrize(
    ("setting", "what"),
    [
        (".kbls-store", INSIDE),  # a direct child
        ("sub/deeper/store", INSIDE),  # deeper
        ("sub/../.kbls", INSIDE),  # inside once `..` is resolved
        ("ROOT/.kbls-store", INSIDE),  # absolute
        (".", ITSELF),
        ("sub/..", ITSELF),
        ("..", ABOVE),
        ("../..", ABOVE),
    ],
)
def test_a_store_setting_inside_at_or_above_the_root_is_refused(root: Path, setting: str, what: str) -> None:
    setting = setting.replace("ROOT", str(root))
    message = _refusal(root, setting)
    assert message.startswith(f"{root / CONFIG_FILE}: store: {setting}: the store folder "), message
    assert what in message and str(root) in message, message
    assert all(fix in message for fix in FIX_SETTING), message


@pytest.mark.parametrize(
    ("where", "what"), [("ROOT/.kbls-store", INSIDE), ("ROOT/sub/deeper", INSIDE), ("ROOT", ITSELF), ("TMP", ABOVE)]
)
def test_a_store_argument_inside_at_or_above_the_root_is_refused(root: Path, tmp_path: Path, where: str, what: str) -> None:
    explicit = Path(where.replace("ROOT", str(root)).replace("TMP", str(tmp_path)))
    write_config(root)  # --store wins over a good setting, and is checked as strictly
    with pytest.raises(ConfigError) as caught:
        resolve_store_dir(root, load_config(root)[0], explicit)
    message = str(caught.value)
    assert message.startswith(f"--store {explicit}: the store folder "), message
    assert what in message and str(root) in message, message
    assert "leave --store out" in message and f"`--store {tmp_path / 'notes-kbls'}`" in message, message


def test_a_symlinked_store_folder_that_resolves_inside_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    """The name is outside the root, the folder it leads to is inside: the folder is what the
    watcher, sync tools and git see."""
    target = root / "sub" / "store"
    target.mkdir()
    link = tmp_path / "notes-store"
    link.symlink_to(target, target_is_directory=True)
    for setting in (str(link), "../notes-store"):
        message = _refusal(root, setting)
        assert f"store: {setting}: the store folder {target} {INSIDE}" in message, message
    with pytest.raises(ConfigError, match=f"--store {link}: the store folder {target} {INSIDE}"):
        resolve_store_dir(root, load_config(root)[0], link)
    assert sorted(p.name for p in target.iterdir()) == []  # nothing was written through the link


def test_a_store_outside_the_root_is_accepted(root: Path, tmp_path: Path) -> None:
    """Beside the root (also a name that merely starts like the root's), anywhere else, and
    a root reached through a symlink with its store beside the real folder."""
    for setting, expected in [
        ("../notes-kbls", tmp_path / "notes-kbls"),
        ("../notes2", tmp_path / "notes2"),  # not inside `notes` although the string starts so
        (str(tmp_path / "elsewhere" / "store"), tmp_path / "elsewhere" / "store"),
    ]:
        (root / CONFIG_FILE).write_text(f"store: {setting}\n")
        assert resolve_store_dir(root, load_config(root)[0]) == expected
    alias = tmp_path / "links" / "kb"
    alias.parent.mkdir()
    alias.symlink_to(root, target_is_directory=True)
    write_config(root)
    assert resolve_store_dir(alias, load_config(alias)[0]) == tmp_path / "notes-kbls"
    assert resolve_store_dir(alias, load_config(alias)[0], tmp_path / "s") == tmp_path / "s"


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_every_cli_command_refuses_a_store_inside_the_root_and_changes_nothing(root: Path, tmp_path: Path) -> None:
    """An index kept inside the root before this rule is refused, never deleted or rebuilt."""
    (root / CONFIG_FILE).write_text("store: .kbls-store\n")
    (root / ".kbls-store").mkdir()
    (root / ".kbls-store" / "kbls.sqlite3").write_bytes(b"the index kept here before")
    queries = tmp_path / "queries.tsv"
    queries.write_text("query\trelevant\nmoon sea\ta.md\n")
    child_env(tmp_path)  # the private cache folder, made before the snapshot
    before = _files(tmp_path)
    commands = [
        ["index"], ["index", "--force"], ["index", "--rebuild"], ["status"], ["search", "moon"],
        ["related", str(root / "a.md")], ["eval", str(queries)],
    ]
    for command in commands:
        proc = run_kbls([*command, "--root", str(root)], tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        assert proc.stderr.startswith(f"kbls: {root / CONFIG_FILE}: store: .kbls-store: the store folder "), proc.stderr
        assert INSIDE in proc.stderr and all(fix in proc.stderr for fix in FIX_SETTING), proc.stderr
    proc = run_kbls(["index", "--root", str(root), "--store", str(root / "sub" / "deeper")], tmp_path)
    assert proc.returncode == 2 and f"kbls: --store {root / 'sub' / 'deeper'}: the store folder" in proc.stderr, proc.stderr
    assert _files(tmp_path) == before


def _refused_root_message(session: LspSession, root: Path) -> str:
    def shown() -> str | None:
        return next((m for m in session.shown() if str(root) in m and INSIDE in m), None)

    return session.wait_for(shown, timeout=60, what="the refused store to be shown")


def _good_indexed(session: LspSession) -> StatusResult | None:
    """`kb/status` once nothing is queued and the first root's note is indexed."""
    status = session.status()
    return status if status.queue == 0 and status.roots and status.roots[0].files == 1 else None


@pytest.mark.parametrize("through_daemon", [False, True], ids=["standalone", "per-user-daemon"])
def test_the_daemon_shows_the_error_and_serves_the_other_roots(
    tmp_path: Path, daemon_env: DaemonEnv, through_daemon: bool  # noqa: F811  (the fixture)
) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    for folder in (good, bad):
        folder.mkdir()
        (folder / "tides.md").write_text("# Tides\n\nThe moon pulls the sea into two bulges.\n")
    write_config(good)
    (bad / CONFIG_FILE).write_text("store: sub/store\n")
    env = daemon_env.env if through_daemon else None
    with LspSession([good, bad], tmp_path, env=env, daemon=through_daemon, name="kbls-store-location") as session:
        message = _refused_root_message(session, bad)
        assert "store: sub/store" in message and all(fix in message for fix in FIX_SETTING[:1]), message
        status = session.wait_for(lambda: _good_indexed(session), timeout=120, what="the good root to be indexed")
        # The refused root is listed with the message, and the state says so (tests/reliability/test_refused_roots.py).
        assert [r.uri for r in status.roots] == [good.as_uri(), bad.as_uri()] and status.state == "error"
        assert status.roots[1].error is not None and INSIDE in status.roots[1].error, status.roots[1]
        assert [h.path for h in session.search("moon sea bulges", mode="lexical").hits] == ["tides.md"]
        if through_daemon:  # the CLI asks the running daemon, which has `good` open: still refused
            env = dict(daemon_env.env, XDG_CACHE_HOME=str(tmp_path / "xdg-cache"))
            for command in (["search", "moon"], ["status"]):
                proc = run_kbls([*command, "--root", str(good), "--store", str(good / "sub")], tmp_path, env=env)
                assert proc.returncode == 2 and f"--store {good / 'sub'}: the store folder" in proc.stderr, proc.stderr
    assert sorted(p.name for p in bad.iterdir()) == [CONFIG_FILE, "tides.md"]  # nothing was created
    assert sorted(p.name for p in good.iterdir()) == [CONFIG_FILE, "tides.md"]


def test_a_config_edited_to_a_store_inside_the_root_is_shown_and_the_root_keeps_its_store(tmp_path: Path) -> None:
    """The daemon reopens a root when its `.kbls.yaml` changes: a store moved inside is refused
    there too, and the root goes on with the store it had."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "tides.md").write_text("# Tides\n\nThe moon pulls the sea into two bulges.\n")
    store = write_config(root)
    with LspSession([root], tmp_path) as session:
        session.wait_ready()
        (root / CONFIG_FILE).write_text("store: .kbls-store\n")
        message = _refused_root_message(session, root)
        assert "store: .kbls-store" in message, message
        status = session.wait_for(lambda: _good_indexed(session), timeout=120, what="the root to stay served")
        assert status.state == "error" and INSIDE in (status.roots[0].error or ""), status  # until it is fixed
        assert [Path(r.store) for r in status.roots] == [store] and status.roots[0].files == 1
        assert [h.path for h in session.search("moon sea bulges", mode="lexical").hits] == ["tides.md"]
    assert not (root / ".kbls-store").exists()


@pytest.mark.mcp
def test_kbls_mcp_names_the_error_for_that_root(root: Path, tmp_path: Path) -> None:
    (root / CONFIG_FILE).write_text("store: .kbls-store\n")
    env = {k: v for k, v in child_env(tmp_path).items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}

    async def statuses(session: ClientSession) -> None:
        state = (await session.call_tool("status", {})).structured_content
        assert state is not None and [r["indexed"] for r in state["roots"]] == [False], state
        assert INSIDE in state["roots"][0]["message"] and ".kbls-store" in state["roots"][0]["message"], state
        found = await session.call_tool("search", {"query": "moon"})
        text = found.content[0]
        assert found.is_error and text.type == "text" and INSIDE in text.text, found

    async def explicit(session: ClientSession) -> None:
        found = await session.call_tool("search", {"query": "moon"})
        text = found.content[0]
        assert found.is_error and text.type == "text" and f"--store {root / 'sub'}" in text.text, found

    _mcp(["--root", str(root)], env, tmp_path, statuses)
    _mcp(["--root", str(root), "--store", str(root / "sub")], env, tmp_path, explicit)
    assert sorted(p.name for p in root.iterdir()) == [CONFIG_FILE, "a.md", "sub"]
    assert not any(p.is_file() for p in (root / "sub").rglob("*"))


def _mcp(args: list[str], env: dict[str, str], tmp_path: Path, scenario: Callable[[ClientSession], Awaitable[None]]) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "kbls", "mcp", *args], env=env, cwd=str(tmp_path))

    async def main() -> None:
        with (tmp_path / "mcp-stderr.log").open("a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                with anyio.fail_after(60):
                    await scenario(session)

    anyio.run(main)



@pytest.mark.parametrize("url", ["https://example.org/store", "sqlite:///tmp/s", "mysql://kb@db.example/notes"])
def test_a_store_written_as_a_url_is_refused_and_creates_no_folder(root: Path, tmp_path: Path, url: str) -> None:
    """Read as a folder, `--store postgresql://h/db` made a folder `postgresql:` in the working
    directory and indexed into it; `store:` in `.kbls.yaml` likewise beside the root. Only
    `postgresql://` names a backend (tests/postgres); any other scheme is an error."""
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    scheme = url.split(":", 1)[0]
    proc = subprocess.run(
        [str(KBLS), "index", "--root", str(root), "--store", url],
        capture_output=True, text=True, timeout=120, cwd=workdir, env=child_env(tmp_path),
    )
    assert_no_traceback(proc)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert f"kbls: --store: {url} is a URL of a scheme kbls has no backend for (`{scheme}:`)" in proc.stderr, proc.stderr
    assert list(workdir.iterdir()) == []
    (root / CONFIG_FILE).write_text(f"store: {url}\n")
    with pytest.raises(ConfigError, match=f"store: {url} is a URL"):
        resolve_store(root, load_config(root)[0])
    assert sorted(p.name for p in root.iterdir()) == [CONFIG_FILE, "a.md", "sub"]


def test_a_postgresql_store_is_a_backend_not_a_folder(root: Path, tmp_path: Path) -> None:
    """`postgresql://` is the team store: a server that cannot be reached is named, and no folder
    `postgresql:` appears; a password in the URL is refused before any connection."""
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    for url, status, said in [
        ("postgresql://kb@127.0.0.1:1/notes", 1, "cannot connect to the store postgresql://kb@127.0.0.1:1/notes"),
        ("postgresql://kb:secret@127.0.0.1:1/notes", 2, "the store URL holds a password"),
    ]:
        proc = subprocess.run(
            [str(KBLS), "index", "--root", str(root), "--store", url],
            capture_output=True, text=True, timeout=120, cwd=workdir, env=child_env(tmp_path),
        )
        assert_no_traceback(proc)
        assert proc.returncode == status and said in proc.stderr, (proc.stdout, proc.stderr)
        assert "secret" not in proc.stderr
    assert list(workdir.iterdir()) == []
    assert sorted(p.name for p in root.iterdir()) == ["a.md", "sub"]


def test_a_windows_drive_is_a_folder_not_a_url(root: Path) -> None:
    """`C:/kb` names a drive's folder: only a scheme of two or more letters is a URL."""
    assert resolve_store_dir(root, load_config(root)[0], Path("C:/kb")).name == "kb"
