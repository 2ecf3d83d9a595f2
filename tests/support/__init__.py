"""What every test suite shares: the LSP test client, corpora and the model.

- `lsp_client`: `LspSession`, the LSP test client: one real `kbls serve` driven over stdio;
- `raw_stdio`: `kbls serve` driven byte by byte (framing tests, the daemon benchmark);
- `corpus`: the fixture workspace, note writers and generated corpora, their sizes;
- `model`: the bundled model, loaded once, and a recorder of what it embeds;
- `processes`: `kbls` run as a child process with a private cache;
- `store_check`: the invariants every store must hold, read straight from SQLite;
- `counting_cli`: `kbls` with each embedded chunk logged (for tests that SIGKILL it).

The fixtures built on these live in `tests/conftest.py`.
"""
