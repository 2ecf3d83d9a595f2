// The wire types and validators are generated from docs/protocol.schema.json at build time
// (scripts/gen-protocol.mjs): each generated module records the sha256 of the schema it was made
// from. A schema changed without regenerating (a build skipped, a stale out/) fails here.
const test = require("node:test");
const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const fs = require("node:fs");
const { SCHEMA_PATH } = require("../helpers/jsonSchema.js");

const sha256 = (text) => crypto.createHash("sha256").update(text).digest("hex");

test("the generated types and validators are those of the schema on disk", () => {
  const current = sha256(fs.readFileSync(SCHEMA_PATH, "utf8"));
  assert.equal(require("../../out/generated/wire.js").SCHEMA_SHA256, current, "out/generated/wire.js: run `npm run build`");
  assert.equal(require("../../out/generated/validators.js").SCHEMA_SHA256, current, "out/generated/validators.js: run `npm run build`");
});

test("a changed schema is told apart from the one generated from", () => {
  const text = fs.readFileSync(SCHEMA_PATH, "utf8");
  const changed = text.replace('"kb/search"', '"kb/find"');
  assert.notEqual(changed, text);
  assert.notEqual(sha256(changed), require("../../out/generated/wire.js").SCHEMA_SHA256);
});

test("the extension's answers are checked by the generated validators, with the schema's defaults", () => {
  const wire = require("../../out/wireParse.js");
  const parsed = wire.parseIndexStatus({ state: "ready", pending: 0, files: 1, chunks: 2 });
  assert.equal(parsed.message, "");
  assert.throws(() => wire.parseIndexStatus({ state: "asleep", pending: 0, files: 1, chunks: 2 }), /params\.state: expected one of/);
});
