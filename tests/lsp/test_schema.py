"""docs/protocol.schema.json is what the wire structs say, and it describes real answers."""

from __future__ import annotations

import json
from pathlib import Path

from kbls.limits import MAX_LIMIT, MAX_QUERY_CHARS, MIN_LIMIT, MODES
from kbls.protocol import schema


def test_committed_schema_is_up_to_date() -> None:
    committed = schema.SCHEMA_FILE.read_text(encoding="utf-8")
    assert committed == schema.render(), "docs/protocol.schema.json is stale: run python -m kbls.protocol.schema"
    assert schema.main(["--check"]) == 0


def test_check_fails_on_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "schema.json"
    stale.write_text(schema.render().replace('"groupByFile"', '"group_by_file"'), encoding="utf-8")
    assert schema.main(["--check", "--out", str(stale)]) == 1


def test_schema_carries_the_contract_constants() -> None:
    defs = json.loads(schema.render())["$defs"]
    params = defs["SearchParams"]["properties"]
    assert params["query"]["maxLength"] == MAX_QUERY_CHARS
    limit = params["limit"]["anyOf"][0]
    assert (limit["minimum"], limit["maximum"]) == (MIN_LIMIT, MAX_LIMIT)
    assert sorted(defs["Mode"]["enum"]) == sorted(MODES)
    assert defs["SearchParams"]["required"] == ["query"]
    # every method named in the schema resolves to a definition
    document = json.loads(schema.render())
    for method in document["methods"].values():
        for ref in method.values():
            if ref is not None:
                assert ref["$ref"].removeprefix("#/$defs/") in defs
