"""The LSP-free daemon: roots, the index queue, its worker and the status it reports."""
