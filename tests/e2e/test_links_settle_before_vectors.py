"""Over the real `kbls serve`: link diagnostics and code lenses are refreshed once the lexical
pass has written every note, while the embedding pass is still filling vectors (lexical first),
not when the last vector is stored."""

from __future__ import annotations

from pathlib import Path

from tests.support.corpus import write_config
from tests.support.lsp_client import LspSession

WORDS = ["harbour", "lantern", "granite", "meadow", "copper", "orchard", "thistle", "ember", "cobalt", "willow"]


def _vault(root: Path) -> None:
    """Enough notes for a lexical-first scan and enough chunks that embedding outlasts it."""
    root.mkdir(parents=True)
    for i in range(50):
        sections = [
            f"## Part {j}\n\n" + " ".join(f"{WORDS[(i + j + k) % len(WORDS)]} {i}-{j}-{k}" for k in range(40))
            for j in range(10)
        ]
        (root / f"n{i:02d} note.md").write_text(f"# Note {i}\n\n" + "\n\n".join(sections) + "\n", encoding="utf-8")
    (root / "a note.md").write_text("# A note\n\nSee [[zz last]].\n", encoding="utf-8")
    (root / "zz last.md").write_text("# zz last\n\nScanned after every other note.\n", encoding="utf-8")


def test_open_notes_are_rechecked_when_every_note_is_written_not_when_every_vector_is(tmp_path: Path) -> None:
    vault = tmp_path / "my vault" / "Über"
    _vault(vault)
    write_config(vault)
    note = vault / "a note.md"
    with LspSession([vault], tmp_path / "logs", lens_refresh=True) as s:
        uri = s.open_document(note, note.read_text(encoding="utf-8"))
        s.wait_for(lambda: s.lens_refreshes > 0 or None, 120, "workspace/codeLens/refresh")
        assert s.status().waiting > 0, "the lenses were refreshed only once every vector was stored"
        s.wait_for(lambda: s.diagnostics(uri) == [] or None, 30, "the link to a note scanned later to resolve")
        status = s.status()
        assert status.waiting > 0 and status.state == "indexing", status  # the embedding pass goes on
