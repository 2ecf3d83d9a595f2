"""Which files a root indexes: include patterns and the excludes that always apply."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from kbls.config import Config
from kbls.engine import Engine
from kbls.indexing.scan import LEFT_OUT_TARGET, Scanner


def _touch(root: Path, *rels: str) -> None:
    for rel in rels:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n\ncontent of {rel}\n")


def _walk(root: Path, store: Path | None = None, config: Config | None = None) -> list[str]:
    scanner = Scanner(root, config or Config(), store or root.parent / "store-outside")
    return [c.rel_path for c in scanner.walk()]


def test_default_includes_markdown_text_and_rst_only(tmp_path: Path) -> None:
    _touch(tmp_path, "a.md", "b.markdown", "c.txt", "d.rst", "e.py", "f.html", "sub/g.md")
    assert _walk(tmp_path) == ["a.md", "b.markdown", "c.txt", "d.rst", "sub/g.md"]


def test_code_project_text_files_are_not_notes_by_default(tmp_path: Path) -> None:
    """Issue 11: `**/*.txt` took requirements.txt and CMakeLists.txt of any code project."""
    _touch(tmp_path, "notes/todo.txt", "README.md", "requirements.txt", "requirements-dev.txt",
           "constraints.txt", "src/CMakeLists.txt", "LICENSE.txt", "docs/robots.txt",
           ".venv/lib/site.txt", "pkg.egg-info/SOURCES.txt", "lib/site-packages/x/README.md")
    assert _walk(tmp_path) == ["README.md", "notes/todo.txt"]


def test_setting_exclude_replaces_the_default_list(tmp_path: Path) -> None:
    _touch(tmp_path, "requirements.txt", "notes/a.md", "notes/skip.md")
    assert _walk(tmp_path, config=Config(exclude=["notes/skip.md"])) == ["notes/a.md", "requirements.txt"]


def test_git_and_node_modules_are_always_excluded(tmp_path: Path) -> None:
    _touch(tmp_path, "keep.md", ".git/COMMIT_EDITMSG.md", ".git/info/x.md",
           "node_modules/pkg/README.md", "web/node_modules/dep/README.md")
    assert _walk(tmp_path) == ["keep.md"]


def test_gitignored_files_and_folders_are_excluded(tmp_path: Path) -> None:
    _touch(tmp_path, "keep.md", "build/out.md", "drafts/secret.md", "drafts/public.md", "sub/local.md", "sub/kept.md")
    (tmp_path / ".gitignore").write_text("build/\ndrafts/secret.md\n")
    (tmp_path / "sub" / ".gitignore").write_text("local.md\n")
    assert _walk(tmp_path) == ["drafts/public.md", "keep.md", "sub/kept.md"]
    scanner = Scanner(tmp_path, Config(), tmp_path.parent / "s")
    assert not scanner.wanted("build/out.md") and not scanner.wanted("sub/local.md")


def test_a_symlink_into_what_the_rules_leave_out_is_not_read(tmp_path: Path) -> None:
    """A link must not make `.git/config`, the store, an excluded or a git-ignored file a note;
    a link to another note, or to a file whose name alone is not a note's, still is one."""
    root = tmp_path / "kb"
    _touch(root, "note.md", "plain", ".git/config", "drafts/secret.md", "build/out.md", "store/kbls.md")
    (root / ".gitignore").write_text("build/\n")
    links = {"git.md": ".git/config", "draft.md": "drafts/secret.md", "built.md": "build/out.md",
             "stored.md": "store/kbls.md", "alias.md": "note.md", "named.md": "plain"}
    for name, target in links.items():
        (root / name).symlink_to(root / target)
    scanner = Scanner(root.resolve(), Config(exclude=["drafts/"]), (root / "store").resolve())
    found = {c.rel_path: c.problem for c in scanner.walk()}
    left_out = {name for name, problem in found.items() if problem == LEFT_OUT_TARGET}
    assert left_out == {"git.md", "draft.md", "built.md", "stored.md"}
    assert found["alias.md"] is None and found["named.md"] is None and found["note.md"] is None


def test_gitignore_can_be_ignored_by_config(tmp_path: Path) -> None:
    _touch(tmp_path, "keep.md", "build/out.md")
    (tmp_path / ".gitignore").write_text("build/\n")
    assert _walk(tmp_path, config=Config(respect_gitignore=False)) == ["build/out.md", "keep.md"]


def test_the_store_inside_the_root_is_excluded(tmp_path: Path) -> None:
    _touch(tmp_path, "keep.md", ".kbls/notes-in-store.md", ".kbls/deeper/x.md")
    store = tmp_path / ".kbls"
    assert _walk(tmp_path, store=store) == ["keep.md"]
    scanner = Scanner(tmp_path, Config(), store)
    assert not scanner.wanted(".kbls/notes-in-store.md") and not scanner.wanted(".kbls/deeper/x.md")


def test_exclude_patterns_and_the_config_file(tmp_path: Path) -> None:
    _touch(tmp_path, "keep.md", "archive/old.md", "tmp/scratch.md", ".kbls.yaml")
    assert _walk(tmp_path, config=Config(exclude=["archive/", "**/scratch.md"], include=["**/*.md", "*.yaml"])) == ["keep.md"]


def test_a_default_store_inside_the_root_is_not_indexed_by_the_engine(
    tmp_path: Path, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`store:` inside the root is a config error (tests/reliability/test_store_location.py), but the
    per-user cache folder may lie inside a root, a home folder opened as a workspace: allowed,
    and the engine never indexes its own store."""
    root = tmp_path / "home"
    _touch(root, "keep.md")
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / ".cache"))
    engine = make_engine(root, store_dir=None)  # no store: setting: the user cache, inside the root
    assert root / ".cache" in engine.store_dir.parents
    _touch(engine.store_dir, "planted.md")
    report = engine.index()
    assert set(engine.store.files()) == {"keep.md"} and report.files == 1


def test_a_full_re_index_follows_gitignore_edits(tmp_path: Path, make_engine: Callable[..., Engine]) -> None:
    """A long-lived engine (the daemon's) must not keep the .gitignore it read first."""
    root = tmp_path / "kb"
    _touch(root, "keep.md", "drafts/wip.md")
    engine = make_engine(root)
    engine.index()
    assert set(engine.store.files()) == {"keep.md", "drafts/wip.md"}
    (root / ".gitignore").write_text("drafts/\n")
    assert engine.index().deleted == 1 and set(engine.store.files()) == {"keep.md"}
    (root / ".gitignore").write_text("")
    engine.index()
    assert set(engine.store.files()) == {"keep.md", "drafts/wip.md"}


# -- git's stacking of ignore files (issue 9) --------------------------------------------------
def _agree(root: Path) -> list[str]:
    """The walk's answer, checked against `wanted` path by path (the daemon's single saves)."""
    walked = _walk(root)
    scanner = Scanner(root, Config(), root.parent / "store-outside")
    every = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md") if ".git" not in p.parts)
    assert [rel for rel in every if scanner.wanted(rel)] == walked
    return walked


def test_a_gitignore_line_that_cannot_be_compiled_is_passed_over_as_git_does(tmp_path: Path) -> None:
    """A trailing backslash made pathspec raise: every scan of the root died with a traceback.
    `git status` lists exactly these three files of this tree."""
    _touch(tmp_path, "keep.md", "drafts/a.md", "notes/b.md", "sub/c.md", "sub/d.md")
    (tmp_path / ".gitignore").write_text("drafts/\nnotes\\\n")
    (tmp_path / "sub" / ".gitignore").write_text("\\\n[z-a]\nd.md\n")  # `[z-a]`: a bad range
    assert _walk(tmp_path) == ["keep.md", "notes/b.md", "sub/c.md"]


def test_a_tree_nested_1100_folders_deep_is_walked(tmp_path: Path) -> None:
    """Python 3.11's os.walk recurses once per level: every full scan died of RecursionError."""
    _touch(tmp_path, "top.md")
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for _ in range(1100):  # by folder descriptors: the path grows past what makedirs recurses
            os.mkdir("a", dir_fd=fd)
            inner = os.open("a", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
        os.symlink(str(tmp_path), "loop", dir_fd=fd)  # a folder symlink is never walked into
    finally:
        os.close(fd)
    try:
        assert _walk(tmp_path) == ["a/" * 1100 + "deep.md", "top.md"]
    finally:
        _remove_nested(tmp_path, 1100)  # pytest's own clean-up (shutil.rmtree) recurses too


def _remove_nested(top: Path, depth: int) -> None:
    """Delete `top`/a/a/…/a (`depth` levels) and what the deepest holds, bottom up."""
    fds = [os.open(top, os.O_RDONLY)]
    try:
        for _ in range(depth):
            fds.append(os.open("a", os.O_RDONLY, dir_fd=fds[-1]))
        for name in os.listdir(fds[-1]):
            os.unlink(name, dir_fd=fds[-1])
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir("a", dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


def test_a_deeper_gitignore_re_includes_what_an_outer_one_excluded(tmp_path: Path) -> None:
    _touch(tmp_path, "top.md", "notes/keep.md", "notes/other.md", "notes/deep/keep.md")
    (tmp_path / ".gitignore").write_text("notes/**/*.md\n")
    (tmp_path / "notes" / ".gitignore").write_text("!keep.md\n")
    assert _agree(tmp_path) == ["notes/deep/keep.md", "notes/keep.md", "top.md"]


def test_the_last_matching_line_of_one_gitignore_decides(tmp_path: Path) -> None:
    _touch(tmp_path, "a.md", "important.md", "sub/important.md")
    (tmp_path / ".gitignore").write_text("*.md\n!important.md\n")
    assert _agree(tmp_path) == ["important.md", "sub/important.md"]


def test_nothing_inside_an_ignored_folder_can_be_re_included(tmp_path: Path) -> None:
    """As git: it never looks inside an ignored folder, so a `!` deeper down cannot apply."""
    _touch(tmp_path, "top.md", "drafts/keep.md", "drafts/wip.md")
    (tmp_path / ".gitignore").write_text("drafts/\n")
    (tmp_path / "drafts" / ".gitignore").write_text("!keep.md\n")
    assert _agree(tmp_path) == ["top.md"]


def test_git_info_exclude_is_respected_below_the_gitignore_files(tmp_path: Path) -> None:
    _touch(tmp_path, "top.md", "private/diary.md", "secret.md", "sub/secret.md")
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("# local excludes\nprivate/\nsecret.md\n")
    (tmp_path / "sub").mkdir(exist_ok=True)
    (tmp_path / "sub" / ".gitignore").write_text("!secret.md\n")  # a .gitignore outranks info/exclude
    assert _agree(tmp_path) == ["sub/secret.md", "top.md"]
    assert _walk(tmp_path, config=Config(respect_gitignore=False)) == [
        "private/diary.md", "secret.md", "sub/secret.md", "top.md",
    ]
