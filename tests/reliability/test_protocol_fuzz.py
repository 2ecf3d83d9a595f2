"""Issue 6, "Hostile input" (protocol): hypothesis sends `kb/*` requests with wrong types, huge
strings, negative or enormous limits, bad URIs and unknown methods to one live daemon. Every
request must get a JSON-RPC answer (a result or an error) within a bound, the daemon must stay
up, and a normal search must still work afterwards.

200 requests in `make test`; 2,000 with KBLS_LONG=1.
"""

from __future__ import annotations

import concurrent.futures
import shutil
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygls.exceptions import JsonRpcException
from tests.support.corpus import REPO, sized, write_config
from tests.support.lsp_client import LspSession

ANSWER_TIMEOUT = 30.0

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=50),
)
json_values = st.recursive(
    json_scalars, lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=10,
)
huge_strings = st.sampled_from([10_000, 100_000, 1_000_000]).map(lambda n: "x" * n)
weird_strings = st.one_of(
    st.text(max_size=200), huge_strings, st.sampled_from([
        "", " ", "\x00", "tag:", "path:", "type:", "path:**/../../etc/*", 'AND OR NOT "(', "*", "NEAR(a b)",
        "\ud800" if False else "\u202e", "🦀" * 100, "a" * 4096, "a" * 4097,
    ]),
)
limits = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1), st.sampled_from([0, 1, 200, 201, -1, 10**100]),
    json_scalars,
)
uris = st.one_of(
    st.sampled_from([
        "", "file://", "file:///", "file:///etc/passwd", "file:///../../etc/passwd", "http://example.com/a.md",
        "file://remote-host/share/a.md", "untitled:Untitled-1", "file:///%00", "file:///%ZZ", "not a uri",
        "file:///" + "a/" * 2000, "file:///tmp/\n.md",
    ]),
    st.text(max_size=100).map(lambda s: "file:///" + s), json_scalars,
)
positions = st.one_of(
    json_values, st.fixed_dictionaries({"line": limits, "character": limits}),
)
search_params = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"query": st.one_of(weird_strings, json_scalars)},
        optional={
            "limit": limits, "mode": st.one_of(st.sampled_from(["hybrid", "semantic", "lexical", "HYBRID", ""]), json_scalars),
            "filters": st.one_of(json_values, st.fixed_dictionaries({}, optional={
                "paths": st.lists(weird_strings, max_size=3) | json_scalars,
                "tags": st.lists(weird_strings, max_size=3) | json_scalars,
                "types": st.lists(weird_strings, max_size=3) | json_scalars,
            })),
            "groupByFile": json_scalars,
        },
    ),
)
related_params = st.one_of(
    json_values,
    st.fixed_dictionaries({"uri": uris}, optional={"position": positions, "limit": limits}),
)
reindex_params = st.one_of(
    json_values, st.fixed_dictionaries({}, optional={"force": json_scalars, "uris": st.lists(uris, max_size=3) | json_scalars}),
)
tags_params = st.one_of(
    json_values, st.fixed_dictionaries({}, optional={"prefix": st.one_of(weird_strings, json_scalars), "limit": limits}),
)
notes_params = st.one_of(
    json_values,
    st.fixed_dictionaries({}, optional={
        "limit": limits, "offset": limits,
        "filters": st.one_of(json_values, st.fixed_dictionaries({}, optional={
            "paths": st.lists(weird_strings, max_size=3) | json_scalars,
            "tags": st.lists(weird_strings, max_size=3) | json_scalars,
        })),
    }),
)
requests = st.one_of(
    st.tuples(st.just("kb/search"), search_params),
    st.tuples(st.just("kb/tags"), tags_params),
    st.tuples(st.just("kb/notes"), notes_params),
    st.tuples(st.just("kb/related"), related_params),
    st.tuples(st.just("kb/reindex"), reindex_params),
    st.tuples(st.just("kb/status"), json_values),
    st.tuples(st.sampled_from(["kb/unknown", "kb/", "kb/search/", "KB/SEARCH", "kb/indexStatus", "x" * 300]), json_values),
)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    tmp = tmp_path_factory.mktemp("fuzz")
    root = tmp / "notes"
    shutil.copytree(REPO / "tests" / "fixtures" / "notes", root)
    write_config(root)
    d = LspSession([root], tmp, name="fuzz")
    d.wait_ready()
    yield d
    d.close()


@settings(
    max_examples=sized(200, 2000), deadline=None, database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(request=requests)
def test_every_request_gets_an_answer(daemon: LspSession, request: tuple[str, object]) -> None:
    method, params = request
    try:
        daemon.request(method, params, timeout=ANSWER_TIMEOUT)
    except JsonRpcException as exc:
        # An error answer is an answer, but bad input is InvalidParams / MethodNotFound:
        # InternalError means the input reached code that did not expect it (docs/protocol.md).
        assert exc.code != -32603, f"{method} {str(params)[:300]!r} -> internal error: {exc}"
    except concurrent.futures.TimeoutError:
        raise AssertionError(f"no answer to {method} within {ANSWER_TIMEOUT}s\n{daemon.log_tail()}") from None
    assert daemon.alive(), daemon.log_tail()


def test_daemon_still_searches_after_the_fuzzing(daemon: LspSession) -> None:
    assert daemon.alive()
    hits = daemon.search("who owns a value after it is moved").hits
    assert hits and hits[0].path.startswith("rust/")


def test_a_backtracking_bomb_of_a_path_filter_is_answered_in_time(daemon: LspSession) -> None:
    bomb = "**/" + "*?" * 14 + "x"
    for params in ({"query": "value", "filters": {"paths": [bomb]}}, {"query": f"path:{bomb} value"}):
        started = time.monotonic()
        daemon.request("kb/search", params, timeout=ANSWER_TIMEOUT)
        assert time.monotonic() - started < 5
