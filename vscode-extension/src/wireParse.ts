// Reads the server's answers into the typed values of `protocol.ts` with the validators generated
// from docs/protocol.schema.json (scripts/gen-protocol.mjs): a renamed or retyped field becomes a
// `WireError` naming it ("kb/search: hits[0].range.start.line: expected an integer, got
// undefined"), not an `undefined` that shows up later as an empty picker. The defaults the
// schema declares (`signals`, `reasons`, `more`, `sections`, `message` ...) are filled in. No
// `vscode` import (plain node tests load it).
import {
  validateBacklinksResult,
  validateIndexStatus,
  validateReindexResult,
  validateSearchResult,
  validateStatusResult,
  type ValidationError,
  type Validator,
} from "./generated/validators";
import type { BacklinksResult, IndexStatus, ReindexResult, SearchResult, StatusResult } from "./generated/wire";

export class WireError extends Error {
  constructor(
    readonly field: string,
    expected: string,
    got: unknown,
  ) {
    super(`${field}: expected ${expected}, got ${got === undefined ? "undefined" : JSON.stringify(got)}`);
    this.name = "WireError";
  }
}

const ARTICLES: Record<string, string> = {
  integer: "an integer",
  number: "a number",
  string: "a string",
  boolean: "a boolean",
  object: "an object",
  array: "an array",
  null: "null",
};

function described(types: unknown): string {
  const list = Array.isArray(types) ? types : [types];
  return list.map((t) => ARTICLES[String(t)] ?? String(t)).join(" or ");
}

/** `/hits/0/range` under `at` as `at.hits[0].range`. */
function field(at: string, pointer: string): string {
  let out = at;
  for (const part of pointer.split("/").slice(1)) {
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    out += /^\d+$/.test(key) ? `[${key}]` : `.${key}`;
  }
  return out;
}

/** What a branch of a schema accepts, in words (a `$ref` says "a value of its kind"). */
function accepts(schema: unknown): string {
  if (typeof schema !== "object" || schema === null) return "a value";
  const s = schema as { type?: unknown; enum?: unknown[]; anyOf?: unknown[]; $ref?: string };
  if (s.type !== undefined) return described(s.type);
  if (Array.isArray(s.enum)) return `one of ${s.enum.join(", ")}`;
  if (Array.isArray(s.anyOf)) return s.anyOf.map(accepts).join(" or ");
  if (typeof s.$ref === "string") return ARTICLES.object;
  return "a value";
}

function wireError(errors: ValidationError[] | null | undefined, at: string): WireError {
  // The last error is the outermost (an `anyOf` after its branches' errors).
  const error = errors?.[errors.length - 1];
  if (error === undefined) return new WireError(at, "a valid answer", undefined);
  if (error.keyword === "required") {
    const missing = String(error.params.missingProperty);
    const property = error.parentSchema?.properties?.[missing];
    return new WireError(`${field(at, error.instancePath)}.${missing}`, accepts(property), undefined);
  }
  const where = field(at, error.instancePath);
  if (error.keyword === "type") return new WireError(where, described(error.params.type), error.data);
  if (error.keyword === "enum") return new WireError(where, `one of ${(error.params.allowedValues as unknown[]).join(", ")}`, error.data);
  if (error.keyword === "anyOf" && Array.isArray(error.schema)) return new WireError(where, error.schema.map(accepts).join(" or "), error.data);
  return new WireError(where, error.message ?? error.keyword, error.data);
}

/** `value` checked by `validate` and with the schema's defaults filled in (on a copy). */
function parse<T>(validate: Validator, value: unknown, at: string): T {
  const copy: unknown = structuredClone(value);
  if (!validate(copy)) throw wireError(validate.errors, at);
  return copy as T;
}

/** The answer of `kb/search` and `kb/related`. */
export function parseSearchResult(value: unknown): SearchResult {
  return parse(validateSearchResult, value, "result");
}

/** The answer of `kb/status`. */
export function parseStatusResult(value: unknown): StatusResult {
  return parse(validateStatusResult, value, "result");
}

/** The answer of `kb/reindex`. */
export function parseReindexResult(value: unknown): ReindexResult {
  return parse(validateReindexResult, value, "result");
}

/** The `kb/indexStatus` notification. */
export function parseIndexStatus(value: unknown): IndexStatus {
  return parse(validateIndexStatus, value, "params");
}

/** The answer of `kb/backlinks`. */
export function parseBacklinksResult(value: unknown): BacklinksResult {
  return parse(validateBacklinksResult, value, "result");
}
