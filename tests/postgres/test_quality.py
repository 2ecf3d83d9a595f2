"""The fused ranking over the team store matches the SQLite backend's on the shared sets: the
same top-10 files for at least 95 % of the queries and nDCG@10 within 0.02, in every mode.

Both backends hold the same rows: the set is indexed once into SQLite (the quality guard's
store, `shared_sets`) and copied into PostgreSQL with its vectors (`tests.support.pg.copy_sqlite_store`), so
any difference is the backend's (its BM25, its vector search), never a second embedding.
Skipped, with the reason printed, where the shared set is absent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.pg import copy_sqlite_store, new_database, team_store
from tests.support.shared_sets import EVAL_DIR, SETS, SharedSets

from kbls.engine import Engine
from kbls.evaluate import read_queries, score_ranking
from kbls.indexing.embed import Embedder

pytestmark = pytest.mark.quality
SAME_TOP10 = 0.95
NDCG_TOLERANCE = 0.02


@pytest.fixture(scope="module", params=SETS)
def engines(
    request: pytest.FixtureRequest, shared_sets: SharedSets, embedder: Embedder, pg_server: Any
) -> Iterator[tuple[str, Engine, Engine]]:
    indexed = shared_sets.get(request.param)
    sqlite = Engine(indexed.root, store_dir=indexed.store, embedder=embedder, read_only=True)
    url = new_database(pg_server)
    writer = team_store(url, indexed.root, model_id=embedder.model_id, dimension=embedder.dimension, sha256=embedder.sha256)
    copy_sqlite_store(sqlite.store_path, writer)
    writer.close()
    team = Engine(indexed.root, store_dir=url, embedder=embedder)
    yield indexed.name, sqlite, team
    team.close()
    sqlite.close()


@pytest.mark.parametrize("mode", ["lexical", "semantic", "hybrid"])
def test_the_team_store_ranks_as_sqlite_does(engines: tuple[str, Engine, Engine], mode: str) -> None:
    name, sqlite, team = engines
    queries = read_queries(EVAL_DIR / f"{name}-queries.tsv")
    same, ndcg_sqlite, ndcg_team, differing = 0, 0.0, 0.0, []
    for query, relevant in queries:
        ours = [h.path for h in sqlite.search(query, limit=10, mode=mode, group_by_file=True).hits]
        theirs = [h.path for h in team.search(query, limit=10, mode=mode, group_by_file=True).hits]
        same += ours == theirs
        if ours != theirs:
            differing.append(query)
        ndcg_sqlite += score_ranking(ours, relevant, 10)[2]
        ndcg_team += score_ranking(theirs, relevant, 10)[2]
    n = len(queries)
    print(f"\n{name} {mode}: same top-10 {same}/{n}; nDCG@10 sqlite {ndcg_sqlite / n:.3f}, postgres {ndcg_team / n:.3f}")
    assert same / n >= SAME_TOP10, differing
    assert abs(ndcg_team - ndcg_sqlite) / n <= NDCG_TOLERANCE
