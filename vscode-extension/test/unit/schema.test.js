// The protocol contract: the extension's request builders and answer parsers (out/protocol.js,
// out/wireParse.js) against docs/protocol.schema.json, which the server exports from its wire
// structs. A field renamed or retyped on either side fails here, without a server.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const kb = require("../../out/protocol.js");
const wire = require("../../out/wireParse.js");
const { loadSchema, resolve, validate, example, SCHEMA_PATH } = require("../helpers/jsonSchema.js");
const { EXT_DIR } = require("../helpers/repo.js");

const schema = loadSchema();
const def = (name) => resolve({ $ref: `#/$defs/${name}` }, schema);
const paramsOf = (method) => schema.methods[method].params;
const resultOf = (method) => schema.methods[method].result;
const ok = (s, value, opts) => assert.deepEqual(validate(s, value, schema, opts), [], JSON.stringify(value));

test(`the schema is the server's export (${path.relative(EXT_DIR, SCHEMA_PATH)})`, () => {
  assert.match(schema.description, /kbls\.protocol\.schema/);
  const requests = [kb.Methods.search, kb.Methods.related, kb.Methods.status, kb.Methods.reindex, kb.Methods.tags, kb.Methods.notes, kb.Methods.backlinks];
  for (const method of requests) {
    assert.ok(schema.methods[method], `${method} in the schema`);
  }
  assert.ok(schema.notifications[kb.Methods.indexStatus], `${kb.Methods.indexStatus} in the schema`);
  assert.deepEqual(Object.keys(schema.methods).sort(), [...requests].sort(),
    "every kb/* request of the server has a typed request in protocol.ts");
});

test("kb/backlinks params from the builder validate and its example result parses", () => {
  ok(paramsOf(kb.Methods.backlinks), kb.backlinksParams("file:///n/a.md"), { strict: true });
  const parsed = wire.parseBacklinksResult(example(resultOf(kb.Methods.backlinks), schema));
  assert.ok(Array.isArray(parsed.backlinks));
});

test("kb/tags and kb/notes params from the builders validate", () => {
  ok(paramsOf(kb.Methods.tags), kb.tagsParams(), { strict: true });
  for (const limit of [0, 1, 50, kb.MAX_TAGS, 1e6, Infinity]) ok(paramsOf(kb.Methods.tags), kb.tagsParams({ prefix: "#ru", limit }), { strict: true });
  assert.equal(def("TagsParams").properties.limit.maximum, kb.MAX_TAGS);
  ok(paramsOf(kb.Methods.notes), kb.notesParams(), { strict: true });
  for (const limit of [0, 1, 200, 201]) {
    ok(paramsOf(kb.Methods.notes), kb.notesParams({ limit, offset: -3, filters: { tags: ["rust"] } }), { strict: true });
  }
});

test("modes, limit range, query cap and index states are the server's", () => {
  assert.deepEqual([...kb.SEARCH_MODES].sort(), [...def("Mode").enum].sort());
  const limit = def("SearchParams").properties.limit.anyOf.find((b) => b.type === "integer");
  assert.equal(kb.MIN_LIMIT, limit.minimum);
  assert.equal(kb.MAX_LIMIT, limit.maximum);
  assert.equal(def("RelatedParams").properties.limit.minimum, kb.MIN_LIMIT);
  assert.equal(def("RelatedParams").properties.limit.maximum, kb.MAX_LIMIT);
  assert.equal(kb.MAX_QUERY_LENGTH, def("SearchParams").properties.query.maxLength);
  assert.deepEqual([...kb.INDEX_STATES].sort(), [...def("IndexInfo").properties.state.enum].sort());
  assert.deepEqual([...kb.INDEX_STATES].sort(), [...def("IndexStatus").properties.state.enum].sort());
});

test("the kbls.search.limit setting allows exactly the server's range", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(EXT_DIR, "package.json"), "utf8"));
  const setting = pkg.contributes.configuration.properties["kbls.search.limit"];
  assert.equal(setting.type, "integer");
  assert.equal(setting.minimum, kb.MIN_LIMIT);
  assert.equal(setting.maximum, kb.MAX_LIMIT);
});

test("kb/search params from the builder validate, with every option and at the edges", () => {
  const s = paramsOf(kb.Methods.search);
  ok(s, kb.searchParams("who owns the heap"), { strict: true });
  for (const mode of kb.SEARCH_MODES) {
    ok(s, kb.searchParams(" tag:rust owner ", { limit: 20, mode, filters: { paths: ["notes/**"], tags: ["rust"], types: ["note"] }, groupByFile: true }), { strict: true });
  }
  for (const limit of [0, -5, 1, 200, 201, 1e6, 2.6, Infinity]) ok(s, kb.searchParams("q", { limit }), { strict: true });
  const long = kb.searchParams("x".repeat(kb.MAX_QUERY_LENGTH + 500));
  assert.equal(long.query.length, kb.MAX_QUERY_LENGTH);
  ok(s, long, { strict: true });
  assert.throws(() => kb.searchParams("q", { mode: "fuzzy" }), /unknown search mode "fuzzy"/);
});

test("kb/related and kb/reindex params from the builders validate", () => {
  const related = paramsOf(kb.Methods.related);
  ok(related, kb.relatedParams("file:///n/a.md", undefined, 10), { strict: true });
  ok(related, kb.relatedParams("file:///n/a.md", { line: 3, character: 7 }, 500), { strict: true });
  ok(related, kb.relatedParams("file:///n/a.md", { line: -1, character: -1 }, 0), { strict: true });
  const reindex = paramsOf(kb.Methods.reindex);
  ok(reindex, kb.reindexParams(), { strict: true });
  ok(reindex, kb.reindexParams({ force: true }), { strict: true });
  ok(reindex, kb.reindexParams({ force: false, uris: ["file:///n/a.md"] }), { strict: true });
});

test("the checker catches what the contract tests are for: a renamed, retyped or out-of-range field", () => {
  const s = paramsOf(kb.Methods.search);
  const renamed = { ...kb.searchParams("q", { groupByFile: true }) };
  renamed.group_by_file = renamed.groupByFile;
  delete renamed.groupByFile;
  assert.match(validate(s, renamed, schema, { strict: true }).join(), /"group_by_file" is not in the schema/);
  assert.match(validate(s, { limit: 5 }, schema).join(), /missing required property "query"/);
  assert.match(validate(s, { query: "q", limit: 201 }, schema).join(), /matches no branch/);
  assert.match(validate(s, { query: "q", mode: "fuzzy" }, schema).join(), /matches no branch/);
  assert.match(validate(resultOf(kb.Methods.reindex), { queued: "3" }, schema).join(), /expected integer/);
});

// Each answer the schema describes, with every field and with the required ones only, goes
// through the parser the extension uses; what comes out must again be a valid answer.
const parsers = [
  ["kb/search", resultOf("kb/search"), wire.parseSearchResult],
  ["kb/related", resultOf("kb/related"), wire.parseSearchResult],
  ["kb/status", resultOf("kb/status"), wire.parseStatusResult],
  ["kb/reindex", resultOf("kb/reindex"), wire.parseReindexResult],
  ["kb/indexStatus", schema.notifications["kb/indexStatus"].params, wire.parseIndexStatus],
];

for (const [method, s, parse] of parsers) {
  test(`${method}: the parser reads the schema's answer, full or with the required fields only`, () => {
    for (const full of [true, false]) {
      const value = example(s, schema, { full });
      assert.deepEqual(validate(s, value, schema), [], "the example itself is valid");
      const parsed = parse(value);
      ok(s, parsed, { strict: true });
      if (full) assert.deepEqual(parsed, value, "every field read as sent");
    }
  });

  test(`${method}: the parser refuses an answer without a required field, naming it`, () => {
    const full = example(s, schema, { full: true });
    const required = resolve(s, schema).required ?? [];
    assert.ok(required.length > 0);
    for (const key of required) {
      const broken = { ...full };
      delete broken[key];
      assert.throws(() => parse(broken), (e) => e instanceof wire.WireError && e.field.endsWith(`.${key}`), `without ${key}`);
    }
  });
}

test("nested fields are checked too: a hit without its range, a root without its store", () => {
  const result = example(resultOf("kb/search"), schema);
  delete result.hits[0].range.start.line;
  assert.throws(() => wire.parseSearchResult(result), /hits\[0\]\.range\.start\.line: expected an integer, got undefined/);
  const status = example(resultOf("kb/status"), schema);
  status.roots[0].store = 7;
  assert.throws(() => wire.parseStatusResult(status), /roots\[0\]\.store: expected a string, got 7/);
});

test("a malformed answer is reported with the method's name", async () => {
  const conn = { sendRequest: async () => ({ hits: [], index: { state: "ready" } }) };
  await assert.rejects(kb.search(conn, kb.searchParams("q")), /^WireError: kb\/search: result\.tookMs: expected a number/);
});
