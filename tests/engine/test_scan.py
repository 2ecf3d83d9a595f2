"""Which files a root indexes: include patterns and the excludes that always apply."""

from __future__ import annotations

from pathlib import Path

from kbls.config import Config
from kbls.indexing.scan import Scanner


def _touch(root: Path, *rels: str) -> None:
    for rel in rels:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n\ncontent of {rel}\n")


def _walk(root: Path, store: Path | None = None, config: Config | None = None) -> list[str]:
    scanner = Scanner(root, config or Config(), store or root.parent / "store-outside")
    return [c.rel_path for c in scanner.walk()]


def test_default_includes_markdown_text_and_rst_only(tmp_path):
    _touch(tmp_path, "a.md", "b.markdown", "c.txt", "d.rst", "e.py", "f.html", "sub/g.md")
    assert _walk(tmp_path) == ["a.md", "b.markdown", "c.txt", "d.rst", "sub/g.md"]


def test_git_and_node_modules_are_always_excluded(tmp_path):
    _touch(tmp_path, "keep.md", ".git/COMMIT_EDITMSG.md", ".git/info/x.md",
           "node_modules/pkg/README.md", "web/node_modules/dep/README.md")
    assert _walk(tmp_path) == ["keep.md"]


def test_gitignored_files_and_folders_are_excluded(tmp_path):
    _touch(tmp_path, "keep.md", "build/out.md", "drafts/secret.md", "drafts/public.md", "sub/local.md", "sub/kept.md")
    (tmp_path / ".gitignore").write_text("build/\ndrafts/secret.md\n")
    (tmp_path / "sub" / ".gitignore").write_text("local.md\n")
    assert _walk(tmp_path) == ["drafts/public.md", "keep.md", "sub/kept.md"]
    scanner = Scanner(tmp_path, Config(), tmp_path.parent / "s")
    assert not scanner.wanted("build/out.md") and not scanner.wanted("sub/local.md")


def test_gitignore_can_be_ignored_by_config(tmp_path):
    _touch(tmp_path, "keep.md", "build/out.md")
    (tmp_path / ".gitignore").write_text("build/\n")
    assert _walk(tmp_path, config=Config(respect_gitignore=False)) == ["build/out.md", "keep.md"]


def test_the_store_inside_the_root_is_excluded(tmp_path):
    _touch(tmp_path, "keep.md", ".kbls/notes-in-store.md", ".kbls/deeper/x.md")
    store = tmp_path / ".kbls"
    assert _walk(tmp_path, store=store) == ["keep.md"]
    scanner = Scanner(tmp_path, Config(), store)
    assert not scanner.wanted(".kbls/notes-in-store.md") and not scanner.wanted(".kbls/deeper/x.md")


def test_exclude_patterns_and_the_config_file(tmp_path):
    _touch(tmp_path, "keep.md", "archive/old.md", "tmp/scratch.md", ".kbls.yaml")
    assert _walk(tmp_path, config=Config(exclude=["archive/", "**/scratch.md"], include=["**/*.md", "*.yaml"])) == ["keep.md"]


def test_the_store_inside_the_root_is_not_indexed_by_the_engine(tmp_path, make_engine):
    root = tmp_path / "kb"
    _touch(root, "keep.md")
    (root / ".kbls.yaml").write_text("store: .kbls-store\n")
    engine = make_engine(root, store_dir=None)  # where the config file says: inside the root
    assert engine.store_dir == root / ".kbls-store"
    _touch(root, ".kbls-store/planted.md")
    report = engine.index()
    assert set(engine.store.files()) == {"keep.md"} and report.files == 1


def test_a_full_re_index_follows_gitignore_edits(tmp_path, make_engine):
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
