"""Find the files of a workspace root that should be indexed.

Include/exclude patterns are gitignore-style (`kbls.query.globs`). `.git/`, `node_modules/`, the
store directory and whatever git would ignore are always excluded: the root's `.gitignore` files
at any depth, stacked as git stacks them, and the root's `.git/info/exclude` (nothing above the
root is read). Symlinks are followed only when they resolve inside the root; directories are not
followed through symlinks, so a symlink loop cannot trap the walk.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec
from pathspec.patterns.gitignore import GitIgnorePatternError

from kbls.config import CONFIG_FILE, Config
from kbls.errors import OutsideRootError
from kbls.query.globs import glob_spec

ALWAYS_SKIPPED_DIRS = {".git", "node_modules", ".hg", ".svn", "__pycache__", ".venv"}
#: the problem of a symlink whose target the rules leave out (see `Scanner._left_out`).
LEFT_OUT_TARGET = "symlink points to a file kbls leaves out (.git/, the store, excluded or git-ignored)"
#: the problem of a FIFO, socket or device named like a note (never opened: a FIFO blocks).
NOT_REGULAR = "not a regular file (FIFO, socket or device)"


@dataclass(frozen=True)
class Candidate:
    rel_path: str  # posix, relative to the root
    abs_path: Path
    size: int
    mtime_ns: int
    problem: str | None = None  # set when the file is listed but must be skipped


class _IgnoreFile:
    """The patterns of one `.gitignore` (or `.git/info/exclude`)."""

    def __init__(self, lines: list[str]) -> None:
        try:
            self.spec = glob_spec(lines)
        except (GitIgnorePatternError, re.error):
            # Git passes over a line it cannot read (`notes\\`: a trailing backslash matches
            # nothing, `[z-a]`); pathspec raises, which failed every scan of the root.
            self.spec = glob_spec(line for line in lines if _readable(line))
        # Without `!` lines a match can only mean "ignored": match_file is a third cheaper.
        self._negates = any(pattern.include is False for pattern in self.spec.patterns)

    def verdict(self, path: str) -> bool | None:
        """True: ignored, False: re-included by a `!` line, None: no line matches."""
        if self._negates:
            return self.spec.check_file(path).include
        return True if self.spec.match_file(path) else None


def _readable(line: str) -> bool:
    """Whether pathspec can compile one `.gitignore` line."""
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (GitIgnorePatternError, re.error):
        return False
    return True


class Scanner:
    """Applies one root's include/exclude rules to a walk or to single paths."""

    def __init__(self, root: Path, config: Config, store_dir: Path) -> None:
        self.root = root.resolve()
        self.config = config
        self.store_dir = store_dir.resolve()
        self._include = glob_spec(config.include)
        self._exclude = glob_spec(config.exclude)
        # Read lazily, dropped at each walk (a .gitignore may change between walks):
        self._gitignores: dict[str, _IgnoreFile | None] = {}  # folder -> its .gitignore
        self._ignored_dirs: dict[str, bool] = {}  # folder -> ignored by git
        self._stacks: dict[str, list[tuple[int, _IgnoreFile]]] = {}  # folder -> see _stack
        self._info_exclude: _IgnoreFile | None = None
        self._info_exclude_read = False
        #: folders the last walk could not list ("" is the root), with why: their files are
        #: unknown, not gone (a permission or I/O error must not drop them from the index).
        self.unlisted: dict[str, str] = {}

    # -- rules -------------------------------------------------------------------------------
    def relative(self, path: Path) -> str:
        """The root-relative posix path; refuses anything outside the root without reading it."""
        absolute = Path(os.path.abspath(path))
        try:
            rel = absolute.relative_to(self.root)
        except ValueError:
            # The root is kept resolved, but an editor may reach it through a symlink (a
            # workspace opened as /link/kb): resolve the folders, never the file itself, which
            # `candidate` judges.
            absolute = Path(os.path.realpath(absolute.parent)) / absolute.name
            try:
                rel = absolute.relative_to(self.root)
            except ValueError:
                raise OutsideRootError(f"{path} is outside the workspace root {self.root}") from None
        if any(part == ".." for part in rel.parts):
            raise OutsideRootError(f"{path} is outside the workspace root {self.root}")
        return rel.as_posix()

    def _gitignore(self, rel_dir: str) -> _IgnoreFile | None:
        """The patterns of `rel_dir/.gitignore` ("" is the root's), or None."""
        if rel_dir not in self._gitignores:
            self._gitignores[rel_dir] = self._read_patterns(self.root / rel_dir / ".gitignore")
        return self._gitignores[rel_dir]

    def _read_patterns(self, path: Path) -> _IgnoreFile | None:
        if not self.config.respect_gitignore or not path.is_file():
            return None
        try:
            patterns = _IgnoreFile(path.read_text(encoding="utf-8", errors="replace").splitlines())
        except OSError:
            return None
        return patterns if patterns.spec.patterns else None

    def _ignored_by_git(self, rel_path: str, is_dir: bool, folders_checked: bool = False) -> bool:
        """Git's rule: a path inside an ignored folder is ignored (git never looks inside it);
        otherwise the deepest `.gitignore` with a matching pattern decides (its last match, which
        may be a `!` re-include), then `.git/info/exclude`.

        :param folders_checked: the walk reached the path, so no folder on its way is ignored."""
        slash = -1 if folders_checked else rel_path.find("/")
        while slash != -1:
            folder = rel_path[:slash]
            if folder not in self._ignored_dirs:
                self._ignored_dirs[folder] = self._git_decides(folder, is_dir=True)
            if self._ignored_dirs[folder]:
                return True
            slash = rel_path.find("/", slash + 1)
        return self._git_decides(rel_path, is_dir)

    def _git_decides(self, rel_path: str, is_dir: bool) -> bool:
        path = rel_path + "/" if is_dir else rel_path
        for cut, patterns in self._stack(rel_path.rpartition("/")[0]):  # the deepest first
            verdict = patterns.verdict(path[cut:])
            if verdict is not None:
                return verdict
        if not self._info_exclude_read:
            self._info_exclude = self._read_patterns(self.root / ".git" / "info" / "exclude")
            self._info_exclude_read = True
        return self._info_exclude is not None and bool(self._info_exclude.verdict(path))

    def _stack(self, rel_dir: str) -> list[tuple[int, _IgnoreFile]]:
        """The `.gitignore` files that apply inside `rel_dir`, the deepest first, each with the
        length of the prefix that makes a root-relative path relative to its folder."""
        stack = self._stacks.get(rel_dir)
        if stack is None:
            outer = self._stack(rel_dir.rpartition("/")[0]) if rel_dir else []
            own = self._gitignore(rel_dir)
            stack = [(len(rel_dir) + 1 if rel_dir else 0, own), *outer] if own is not None else outer
            self._stacks[rel_dir] = stack
        return stack

    def _dir_excluded(self, rel_dir: str, abs_dir: Path) -> bool:
        name = rel_dir.rsplit("/", 1)[-1]
        if name in ALWAYS_SKIPPED_DIRS:
            return True
        if abs_dir == self.store_dir:
            return True
        if self._exclude.match_file(rel_dir + "/"):
            return True
        return self._ignored_by_git(rel_dir, is_dir=True)

    def wanted(self, rel_path: str, _walked: bool = False) -> bool:
        """Whether a root-relative file path is indexed under the rules (no disk access)."""
        if rel_path == CONFIG_FILE or not self._include.match_file(rel_path):
            return False
        if self._exclude.match_file(rel_path):
            return False
        parts = rel_path.split("/")
        if any(p in ALWAYS_SKIPPED_DIRS for p in parts[:-1]):
            return False
        abs_parent = (self.root / rel_path).parent
        if abs_parent == self.store_dir or self.store_dir in abs_parent.parents:
            return False
        return not self._ignored_by_git(rel_path, is_dir=False, folders_checked=_walked)

    def _left_out(self, target_rel: str) -> bool:
        """Whether a symlink's target lies where the rules keep kbls out (`.git/`, the store, an
        excluded or git-ignored path): a link in the notes must not make `.git/config` a note.
        Only where the target lies counts, not its name (a link `x.md` to `x` is a note)."""
        if any(part in ALWAYS_SKIPPED_DIRS for part in target_rel.split("/")[:-1]):
            return True
        target = self.root / target_rel
        if target.parent == self.store_dir or self.store_dir in target.parents:
            return True
        return bool(self._exclude.match_file(target_rel)) or self._ignored_by_git(target_rel, is_dir=False)

    # -- disk --------------------------------------------------------------------------------
    def candidate(self, rel_path: str) -> Candidate | None:
        """Stat one wanted file; None when it does not exist (any more)."""
        abs_path = self.root / rel_path
        try:
            # Resolve every component, not only the file: a symlinked folder on the way (a path
            # handed in by a save or a watcher event) may lead out of the root just the same.
            target = Path(os.path.realpath(abs_path))
            if target != self.root and self.root not in target.parents:
                return Candidate(rel_path, abs_path, 0, 0, "symlink points outside the workspace root")
            if target != abs_path and self._left_out(target.relative_to(self.root).as_posix()):
                return Candidate(rel_path, abs_path, 0, 0, LEFT_OUT_TARGET)
            st = abs_path.stat()
        except FileNotFoundError:
            if abs_path.is_symlink():  # listed, but its target is gone: say so rather than vanish
                return Candidate(rel_path, abs_path, 0, 0, "symlink target does not exist")
            return None
        except OSError as exc:
            return Candidate(rel_path, abs_path, 0, 0, f"cannot stat: {exc.strerror or exc}")
        if stat.S_ISDIR(st.st_mode):
            return None
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block the reader; a device is no note
            return Candidate(rel_path, abs_path, 0, 0, NOT_REGULAR)
        return Candidate(rel_path, abs_path, st.st_size, st.st_mtime_ns)

    def walk(self) -> list[Candidate]:
        """Every wanted file under the root, sorted by path."""
        self._gitignores.clear()  # a .gitignore may have changed since the last walk
        self._ignored_dirs.clear()
        self._stacks.clear()
        self._info_exclude_read = False
        self.unlisted = {}
        found: list[Candidate] = []
        for abs_dir, dirnames, filenames in self._tree():
            rel_dir = "" if abs_dir == self.root else abs_dir.relative_to(self.root).as_posix()
            dirnames[:] = sorted(
                d for d in dirnames
                if not self._dir_excluded(f"{rel_dir}/{d}" if rel_dir else d, abs_dir / d)
            )
            for name in filenames:
                rel = f"{rel_dir}/{name}" if rel_dir else name
                # Names that no editor URI or log line carries faithfully are not indexed, but
                # listed as problems (a non-UTF-8 name with its bytes escaped) so users see why.
                problem = None
                if "\n" in rel or "\r" in rel:
                    problem = "file name contains a line break; not indexed"
                try:
                    rel.encode("utf-8")
                except UnicodeEncodeError:  # surrogate-escaped by os.walk
                    rel = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                    problem = "file name is not valid UTF-8; not indexed"
                if problem is not None:
                    if self.wanted(rel, _walked=True):
                        found.append(Candidate(rel, abs_dir / name, 0, 0, problem))
                    continue
                if self.wanted(rel, _walked=True):
                    candidate = self.candidate(rel)
                    if candidate is not None:
                        found.append(candidate)
        found.sort(key=lambda c: c.rel_path)
        return found

    def _tree(self) -> Iterator[tuple[Path, list[str], list[str]]]:
        """`os.walk(root, followlinks=False)` without recursion: Python 3.11's recurses once per
        level, and a tree nested ~1,000 folders deep made every full scan die of RecursionError.
        Yields (folder, folder names, other names); the caller prunes the folder names in place.
        A symlink to a folder is a folder name (never walked into), as in os.walk."""
        stack = [self.root]
        while stack:
            folder = stack.pop()
            folders: list[str] = []
            others: list[str] = []
            links: set[str] = set()
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        try:
                            is_dir = entry.is_dir()
                        except OSError:
                            is_dir = False
                        if not is_dir:
                            others.append(entry.name)
                            continue
                        folders.append(entry.name)
                        if entry.is_symlink():
                            links.add(entry.name)
            except OSError as exc:
                self._unlisted(folder, exc)
                continue
            yield folder, folders, others
            stack.extend(folder / name for name in reversed(folders) if name not in links)

    def _unlisted(self, folder: Path, error: OSError) -> None:
        """The walk could not list `folder`: remember it, unless it was deleted meanwhile."""
        if isinstance(error, FileNotFoundError) and folder != self.root:
            return  # gone between listing its parent and reading it: its files are gone too
        rel = "" if folder == self.root else folder.relative_to(self.root).as_posix()
        self.unlisted[rel] = error.strerror or str(error)

    def under_unlisted(self, rel_path: str) -> bool:
        """Whether `rel_path` lies in a folder the last walk could not list."""
        return bool(self.unlisted) and any(
            folder == "" or rel_path.startswith(folder + "/") for folder in self.unlisted
        )
