"""Incremental indexing in the daemon: saves, outside changes through the watcher, no loops."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.support.lsp_client import LspSession

WATCH_TIMEOUT = 20.0

LONG_NOTE = """\
# Lighthouse keeping

## The lamp

The keeper trims the wick at dusk, polishes the brass reflectors and winds the clockwork that
turns the lens. A steady beam depends on clean glass, dry paraffin and a patient hand, and every
hour of the night the keeper writes the state of the flame into the log book by the stairs.
Spare mantles, chimneys and a second lens motor wait in the store room below the gallery.

## The fog signal

When the fog rolls in from the sea, the beam is useless and sound takes over. The keeper starts
the compressor, watches the pressure gauge climb and sets the horn to its pattern of two blasts
every minute. Ships far out count the seconds between blasts to know which station they hear
and steer away from the reef that lies under the grey water to the south of the point.

## Supplies

Every fortnight a tender brings water, coal, flour and letters. In winter storms the tender may
not come for weeks, so the cellar holds tins of meat, sacks of potatoes and barrels of rainwater.
The keeper counts the stores each Sunday and signals the mainland with flags when they run low,
because a keeper who runs out of paraffin cannot keep the light burning through the long night.
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_saved_edit_is_found_and_only_changed_chunks_are_embedded(shared: LspSession, module_workspace: Path) -> None:
    note = module_workspace / "sea" / "lighthouse.md"
    _write(note, LONG_NOTE)
    shared.wait_for(lambda: shared.paths_found("fog signal compressor", limit=1) == ["sea/lighthouse.md"],
                    timeout=WATCH_TIMEOUT, what="the new note")
    before = shared.wait_ready()
    chunks_of_note = len(shared.search("lighthouse keeper", limit=50, filters={"paths": ["sea/**"]}).hits)
    assert chunks_of_note >= 3
    edited = LONG_NOTE.replace(
        "Spare mantles, chimneys and a second lens motor wait in the store room below the gallery.",
        "A tame cormorant called Bartholomew sleeps on the gallery rail and steals sardines.",
    )
    _write(note, edited)
    shared.save(note)
    shared.wait_for(
        lambda: "sea/lighthouse.md" in shared.paths_found("cormorant Bartholomew sardines", limit=3),
        timeout=WATCH_TIMEOUT, what="the edited words to be found",
    )
    after = shared.wait_ready()
    assert after.embedded_since_start - before.embedded_since_start == 1
    assert after.roots[0].chunks == before.roots[0].chunks


def test_file_written_by_another_process_is_found_after_the_debounce(shared: LspSession, module_workspace: Path) -> None:
    text = "# Tomatoes\n\nPinch out the side shoots of cordon tomato plants weekly.\n"
    _write(module_workspace / "garden" / "tomatoes.md", text)
    found = shared.wait_for(
        lambda: "garden/tomatoes.md" in shared.paths_found("side shoots of cordon tomatoes", limit=3),
        timeout=WATCH_TIMEOUT, what="the new file to be found",
    )
    assert found


def test_deleted_file_disappears_from_results(shared: LspSession, module_workspace: Path) -> None:
    assert "cooking/pasta.md" in shared.paths_found("tagliatelle", mode="lexical")
    (module_workspace / "cooking" / "pasta.md").unlink()
    shared.wait_for(
        lambda: "cooking/pasta.md" not in shared.paths_found("tagliatelle", mode="lexical"),
        timeout=WATCH_TIMEOUT, what="the deleted file to leave the results",
    )


def test_moved_folder_is_found_under_its_new_path(shared: LspSession, module_workspace: Path) -> None:
    os.rename(module_workspace / "travel", module_workspace / "trips")
    shared.wait_for(
        lambda: shared.paths_found("shinkansen rail pass", mode="lexical")[:1] == ["trips/japan.md"],
        timeout=WATCH_TIMEOUT, what="the moved note under its new path",
    )
    assert all(not p.startswith("travel/") for p in shared.paths_found("rail pass passport", mode="lexical"))


def test_excluded_files_are_not_indexed(shared: LspSession, module_workspace: Path) -> None:
    _write(module_workspace / "node_modules" / "pkg" / "readme.md", "# Pkg\n\nzanzibar quokka marmalade\n")
    _write(module_workspace / "garden" / "notes.bin", "zanzibar quokka marmalade")
    _write(module_workspace / "garden" / "plan.md", "# Plan\n\nzanzibar quokka marmalade\n")
    shared.wait_for(lambda: shared.paths_found("zanzibar quokka", mode="lexical"), timeout=WATCH_TIMEOUT)
    assert shared.paths_found("zanzibar quokka marmalade", mode="lexical") == ["garden/plan.md"]


def test_reading_files_does_not_trigger_indexing_again(shared: LspSession) -> None:
    # A forced re-index reads every file: those reads (opened / closed_no_write events) must not
    # come back as changes, or the daemon would index forever.
    shared.request("kb/reindex", {"force": True})
    shared.wait_ready()
    settled = len(shared.statuses())
    time.sleep(1.0)  # several debounce periods
    later = shared.statuses()[settled:]
    assert all(s["state"] == "ready" for s in later), later
    assert shared.status().state == "ready"


def test_changed_config_is_applied_without_a_restart(shared: LspSession, module_workspace: Path) -> None:
    config = module_workspace / ".kbls.yaml"
    original = config.read_text()
    config.write_text(original + "exclude: ['cooking/']\n", encoding="utf-8")
    try:
        shared.wait_for(
            lambda: not [p for p in shared.paths_found("flour water starter", mode="lexical") if p.startswith("cooking/")],
            timeout=WATCH_TIMEOUT, what="cooking/ to be excluded",
        )
    finally:
        config.write_text(original, encoding="utf-8")
    shared.wait_for(
        lambda: "cooking/sourdough.md" in shared.paths_found("flour water starter", mode="lexical"),
        timeout=WATCH_TIMEOUT, what="cooking/ to come back",
    )


def test_gitignore_edit_drops_and_restores_the_files_it_names(shared: LspSession, module_workspace: Path) -> None:
    """A .gitignore change is a rescan: newly ignored notes leave the index, and come back."""
    gitignore = module_workspace / ".gitignore"
    _write(module_workspace / "garden" / "compost.md", "# Compost\n\nTurn the heap of wormcast and leaf mould monthly.\n")
    query = "wormcast leaf mould heap"
    shared.wait_for(lambda: "garden/compost.md" in shared.paths_found(query, mode="lexical"),
                    timeout=WATCH_TIMEOUT, what="the new note to be found")
    gitignore.write_text("compost.md\n", encoding="utf-8")
    try:
        shared.wait_for(
            lambda: "garden/compost.md" not in shared.paths_found(query, mode="lexical"),
            timeout=WATCH_TIMEOUT, what="the ignored note to leave the results",
        )
    finally:
        gitignore.unlink()
    shared.wait_for(
        lambda: "garden/compost.md" in shared.paths_found(query, mode="lexical"),
        timeout=WATCH_TIMEOUT, what="the note to come back once .gitignore is gone",
    )
