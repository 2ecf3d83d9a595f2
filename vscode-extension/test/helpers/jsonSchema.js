// A small JSON Schema (2020-12) checker for the subset docs/protocol.schema.json uses ($ref into
// $defs, anyOf, type, enum, properties, required, items, minimum/maximum, minLength/maxLength),
// plus `example`, which builds an instance of a schema for the parser tests. `strict` also
// refuses properties the schema does not declare: a client sending `groupByfile` or reading a
// field the server renamed is the failure the contract tests exist to catch.
const fs = require("node:fs");
const path = require("node:path");
const { REPO } = require("./repo");

const SCHEMA_PATH = path.join(REPO, "docs", "protocol.schema.json");

function loadSchema() {
  return JSON.parse(fs.readFileSync(SCHEMA_PATH, "utf8"));
}

function resolve(schema, root) {
  let s = schema;
  for (let guard = 0; s && s.$ref; guard++) {
    if (guard > 32) throw new Error(`$ref loop at ${schema.$ref}`);
    const m = /^#\/\$defs\/(.+)$/.exec(s.$ref);
    if (!m || !root.$defs || !(m[1] in root.$defs)) throw new Error(`unresolvable $ref ${s.$ref}`);
    s = { ...root.$defs[m[1]], ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== "$ref")) };
  }
  return s;
}

function typeOf(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function typeMatches(want, v) {
  const got = typeOf(v);
  return want === got || (want === "number" && got === "integer");
}

/** Every violation of `schema` by `value`, as "at: what" strings ([] when valid). */
function validate(schema, value, root, { strict = false, at = "$" } = {}) {
  const s = resolve(schema, root);
  const errors = [];
  if (s.anyOf) {
    const branches = s.anyOf.map((b) => validate(b, value, root, { strict, at }));
    if (!branches.some((e) => e.length === 0)) errors.push(`${at}: matches no branch of anyOf (${branches.map((e) => e[0]).join(" | ")})`);
    return errors;
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((t) => typeMatches(t, value))) return [`${at}: expected ${types.join("|")}, got ${typeOf(value)}`];
  }
  if (s.enum && !s.enum.some((e) => e === value)) errors.push(`${at}: ${JSON.stringify(value)} not in ${JSON.stringify(s.enum)}`);
  if (s.const !== undefined && s.const !== value) errors.push(`${at}: expected ${JSON.stringify(s.const)}`);
  if (typeof value === "number") {
    if (s.minimum !== undefined && value < s.minimum) errors.push(`${at}: ${value} < minimum ${s.minimum}`);
    if (s.maximum !== undefined && value > s.maximum) errors.push(`${at}: ${value} > maximum ${s.maximum}`);
  }
  if (typeof value === "string") {
    if (s.maxLength !== undefined && value.length > s.maxLength) errors.push(`${at}: length ${value.length} > maxLength ${s.maxLength}`);
    if (s.minLength !== undefined && value.length < s.minLength) errors.push(`${at}: length ${value.length} < minLength ${s.minLength}`);
  }
  if (Array.isArray(value) && s.items) value.forEach((v, i) => errors.push(...validate(s.items, v, root, { strict, at: `${at}[${i}]` })));
  if (typeOf(value) === "object" && (s.properties || s.required)) {
    const props = s.properties ?? {};
    for (const k of s.required ?? []) if (!(k in value)) errors.push(`${at}: missing required property "${k}"`);
    for (const [k, v] of Object.entries(value)) {
      if (k in props) errors.push(...validate(props[k], v, root, { strict, at: `${at}.${k}` }));
      else if (strict || s.additionalProperties === false) errors.push(`${at}: property "${k}" is not in the schema`);
    }
  }
  return errors;
}

/**
 * An instance of `schema`: with `full`, every property (the non-null branch of an anyOf, the
 * first enum value, numbers inside their bounds); without, only the required ones.
 */
function example(schema, root, { full = true, at = "$" } = {}) {
  const s = resolve(schema, root);
  if (s.anyOf) {
    const branch = s.anyOf.find((b) => resolve(b, root).type !== "null") ?? s.anyOf[0];
    return example(branch, root, { full, at });
  }
  if (s.enum) return s.enum[0];
  if (s.const !== undefined) return s.const;
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  switch (type) {
    case "object": {
      const out = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) {
        if (full || (s.required ?? []).includes(k)) out[k] = example(v, root, { full, at: `${at}.${k}` });
      }
      return out;
    }
    case "array":
      return s.items ? [example(s.items, root, { full, at: `${at}[0]` })] : [];
    case "string":
      return `${at.split(".").pop()}`.slice(0, s.maxLength ?? Infinity) || "x";
    case "integer":
      return Math.max(s.minimum ?? 0, Math.min(s.maximum ?? 3, 3));
    case "number":
      return Math.max(s.minimum ?? 0, Math.min(s.maximum ?? 0.5, 0.5));
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      throw new Error(`${at}: cannot build an example of ${JSON.stringify(s)}`);
  }
}

module.exports = { SCHEMA_PATH, loadSchema, resolve, validate, example };
