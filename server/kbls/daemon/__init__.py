"""The LSP-free daemon: roots, the index queue, its worker and the status it reports, and the
host every language-server connection drives (`host`)."""

import os

# One BLAS thread: a query's matrix-vector product over the in-memory vectors is memory-bound
# (~3 ms at 50k x 384 on one core), and two OpenBLAS threads on a busy two-core machine waited
# for each other and tripled the median (docs/adr/0001-vector-search.md). Set here, before any
# daemon module imports numpy, for `kbls serve` and `kbls daemon` alike.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
