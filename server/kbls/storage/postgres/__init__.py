"""The PostgreSQL + pgvector backend of the store (docs/adr/0002-team-scale.md, docs/team.md).

One database holds the index of one or more named roots: `location` reads `store:
postgresql://…`, `connection` keeps one connection per reading thread (reconnecting once when one
drops) and the ingest worker's advisory lock, `schema` creates and migrates the tables, `terms`
tokenizes text as FTS5's unicode61 does so `lexical` computes the same BM25 from a term table,
`writes` writes one note per transaction, `reads` and `spans` answer the engine's queries,
`vectors` searches the HNSW index, and `store.PostgresStore` ties them to one root.
"""
