"""The `kbls` command line: --json outputs, eval on a tiny TSV, exit status 2 for bad config."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.corpus import write

from kbls.cli import main

NOTES = {
    "rust/ownership.md": (
        "# Ownership\n\nEvery value has a single owner; when the owner goes out of scope the value is dropped.\n"
    ),
    "cooking/bread.md": (
        "---\ntags: [baking]\n---\n# Sourdough\n\nFeed the starter and bake the loaf in a Dutch oven.\n"
    ),
    "travel/japan.md": "# Japan\n\nThe rail pass covers the bullet train between Tokyo and Kyoto.\n",
}


@pytest.fixture
def cli(tmp_path, capsys, monkeypatch, embedder):
    """cli(*args) -> (exit status, stdout, stderr) of `kbls` run in this process.

    Each command builds its Engine as usual but gets the session's (real, loaded) model
    instead of loading its own ONNX session: same model, a second less per command.
    """
    monkeypatch.setattr("kbls.engine.Embedder", lambda config=None: embedder)
    root = tmp_path / "kb"
    for rel, text in NOTES.items():
        write(root, rel, text)
    store = tmp_path / "store"

    def run(*args: str, store_args: bool = True):
        extra = ["--root", str(root), "--store", str(store)] if store_args else []
        status = main([*args, *extra])
        out, err = capsys.readouterr()
        return status, out, err

    run.root = root
    return run


def test_index_json_reports_files_chunks_embedded_skipped_seconds(cli):
    (cli.root / "blob.md").write_bytes(b"\x00binary")
    status, out, _ = cli("index", "--json")
    report = json.loads(out)
    assert status == 0
    assert {"files", "chunks", "embedded", "skipped", "seconds"} <= set(report)
    assert report["files"] == 3 and report["chunks"] >= 3 and report["embedded"] == report["chunks"]
    assert [s["path"] for s in report["skipped"]] == ["blob.md"] and "binary" in report["skipped"][0]["reason"]
    status, out, _ = cli("index", "--json")
    assert json.loads(out)["embedded"] == 0


def test_search_json_hits(cli):
    cli("index")
    status, out, _ = cli("search", "which train goes to Kyoto", "--json", "--limit", "2")
    hits = json.loads(out)
    assert status == 0 and 1 <= len(hits) <= 2
    assert {"path", "start_line", "end_line", "breadcrumb", "snippet", "score", "signals"} <= set(hits[0])
    assert hits[0]["path"] == "travel/japan.md"
    status, out, _ = cli("search", "tag:baking loaf", "--json", "--mode", "lexical")
    assert [h["path"] for h in json.loads(out)] == ["cooking/bread.md"]


def test_status_json(cli):
    cli("index")
    status, out, _ = cli("status", "--json")
    data = json.loads(out)
    assert status == 0
    assert data["files"] == 3 and data["chunks"] >= 3 and data["dimension"] == 384
    assert "all-MiniLM-L6-v2" in data["model"] and data["sqlite"]["vec"].startswith("v")
    assert data["root"] == str(cli.root.resolve()) and data["errors"] == []


def test_related_json(cli):
    cli("index")
    status, out, _ = cli("related", str(cli.root / "rust/ownership.md") + ":1", "--json")
    assert status == 0 and "rust/ownership.md" not in [h["path"] for h in json.loads(out)]


def test_related_at_line_0_exits_2(cli: Any) -> None:
    """Lines are 1-based: `FILE:0` became line -1 and answered nothing, with exit 0."""
    cli("index")
    status, out, err = cli("related", str(cli.root / "rust/ownership.md") + ":0", "--json")
    assert status == 2 and out == "" and "ownership.md:0: line numbers start at 1" in err


@pytest.mark.parametrize("command", ["search", "related"])
def test_a_limit_out_of_range_exits_2_naming_the_range(cli, command):
    cli("index")
    target = "owner" if command == "search" else str(cli.root / "rust/ownership.md")
    status, out, err = cli(command, target, "--limit", "-5", "--json")
    assert status == 2 and out == "" and "limit must be from 1 to 200, not -5" in err


def test_eval_on_a_tiny_tsv(cli, tmp_path):
    queries = tmp_path / "queries.tsv"
    queries.write_text(
        "query\trelevant\n"
        "what happens to a value when its owner leaves scope\trust/ownership.md\n"
        "baking with a starter\tcooking/bread.md\n"
        "bullet train pass\ttravel/japan.md|rust/ownership.md\n"
    )
    status, out, _ = cli("eval", str(queries), "--json")
    report = json.loads(out)
    assert status == 0 and report["k"] == 10
    modes = {m["mode"]: m for m in report["modes"]}
    assert set(modes) == {"hybrid", "semantic", "lexical"}
    for scores in modes.values():
        assert scores["queries"] == 3
        assert 0.0 <= scores["ndcg"] <= 1.0 and 0.0 <= scores["mrr"] <= 1.0 and 0.0 <= scores["recall"] <= 1.0
    assert modes["semantic"]["mrr"] == 1.0  # the first hit of every query is its best note
    status, out, _ = cli("eval", str(queries), "--no-index")
    assert status == 0 and "| hybrid |" in out and "nDCG@10" in out


@pytest.mark.parametrize(
    ("content", "named"),
    [
        (None, "No such file"),
        (b"q\tr\nx\ty\n", "header"),
        (b"query\trelevant\nborrow rules without a tab\n", "q.tsv:2: expected"),
        (b"query\trelevant\n\xff\xfe borrow\ta.md\n", "can't decode"),
        ("folder", "Is a directory"),
    ],
    ids=["missing", "no-header", "no-tab", "not-utf8", "a-folder"],
)
def test_eval_of_a_queries_file_it_cannot_read_exits_2(cli: Any, tmp_path: Path, content: bytes | str | None, named: str) -> None:
    """Each died with a traceback (FileNotFoundError, ValueError, AttributeError...)."""
    queries = tmp_path / "q.tsv"
    if isinstance(content, str):  # "folder"
        queries.mkdir()
    elif content is not None:
        queries.write_bytes(content)
    status, out, err = cli("eval", str(queries), "--no-index")
    assert status == 2 and out == "" and f"cannot read the queries {queries}" in err and named in err, err


def test_a_bad_config_exits_2_naming_the_key(cli):
    (cli.root / ".kbls.yaml").write_text("search:\n  limit: many\n")
    status, out, err = cli("index", "--json")
    assert status == 2 and out == ""
    assert "search.limit" in err and ".kbls.yaml" in err and "int" in err


def test_the_installed_command_exits_2_on_a_bad_config(tmp_path):
    """The real entry point in a fresh process, not only main() in this one."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / ".kbls.yaml").write_text("model:\n  batchsize: 8\n")
    done = subprocess.run(
        [sys.executable, "-m", "kbls", "status", "--root", str(root), "--store", str(tmp_path / "s")],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "batchsize" in done.stderr and "batch_size" in done.stderr and done.stdout == ""


@pytest.mark.parametrize("what", ["missing", "a-file.md"])
def test_a_root_that_is_no_folder_exits_2_and_creates_no_store(tmp_path: Path, what: str) -> None:
    """`kbls index --root ~/notse` indexed nothing, exited 0 and left an empty store in the cache."""
    from tests.support.processes import assert_no_traceback, child_env, run_kbls

    (tmp_path / "a-file.md").write_text("# not a folder\n")
    root = tmp_path / what
    for command in (["index"], ["status"], ["search", "anything"], ["related", "x.md"], ["index", "--rebuild"]):
        done = run_kbls([*command, "--root", str(root)], tmp_path)
        assert_no_traceback(done)
        assert done.returncode == 2, (command, done.stderr)
        expected = "does not exist" if what == "missing" else "is not a folder"
        assert f"--root {root}: {root} {expected}" in done.stderr, done.stderr
    cache = child_env(tmp_path)["XDG_CACHE_HOME"]
    assert not any(p.name.startswith(what) for p in (tmp_path / cache / "kbls").glob("*")), "a store was created"
