// Reads the server's answers into the typed values of `protocol.ts`, checking every field the
// extension reads: a renamed or retyped field becomes a `WireError` naming it ("kb/search:
// hits[0].range.start.line: expected an integer, got undefined"), not an `undefined` that shows
// up later as an empty picker. Defaults are the ones the schema declares (`signals`, `reasons`,
// `more`, `sections`, `message`). No `vscode` import (plain node tests load it).
import { INDEX_STATES, type IndexState } from "./limits";
import type {
  Backlink,
  BacklinksResult,
  Explain,
  FileProblem,
  Hit,
  IndexInfo,
  IndexStatusNotification,
  Position,
  Range,
  ReindexResult,
  RootStatus,
  SearchResult,
  Section,
  Signals,
  SqliteInfo,
  StatusResult,
} from "./protocol";

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

type Fields = Record<string, unknown>;

function object(value: unknown, at: string): Fields {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new WireError(at, "an object", value);
  return value as Fields;
}

function string(o: Fields, key: string, at: string): string {
  const v = o[key];
  if (typeof v !== "string") throw new WireError(`${at}.${key}`, "a string", v);
  return v;
}

function number(o: Fields, key: string, at: string): number {
  const v = o[key];
  if (typeof v !== "number" || !Number.isFinite(v)) throw new WireError(`${at}.${key}`, "a number", v);
  return v;
}

function integer(o: Fields, key: string, at: string, fallback?: number): number {
  const v = o[key] === undefined && fallback !== undefined ? fallback : o[key];
  if (typeof v !== "number" || !Number.isInteger(v)) throw new WireError(`${at}.${key}`, "an integer", v);
  return v;
}

function array<T>(o: Fields, key: string, at: string, item: (v: unknown, at: string) => T, fallback?: T[]): T[] {
  const v = o[key] === undefined && fallback !== undefined ? fallback : o[key];
  if (!Array.isArray(v)) throw new WireError(`${at}.${key}`, "an array", v);
  return v.map((x, i) => item(x, `${at}.${key}[${i}]`));
}

function state(o: Fields, at: string): IndexState {
  const v = o.state;
  if (typeof v !== "string" || !(INDEX_STATES as readonly string[]).includes(v)) {
    throw new WireError(`${at}.state`, `one of ${INDEX_STATES.join(", ")}`, v);
  }
  return v as IndexState;
}

function nullableInteger(o: Fields, key: string, at: string): number | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isInteger(v)) throw new WireError(`${at}.${key}`, "an integer or null", v);
  return v;
}

/** The optional `error` text (a root that failed to open, an index in error): kept only when sent. */
function errorField(o: Fields, at: string): { error?: string | null } {
  const v = o.error;
  if (v === undefined) return {};
  if (v !== null && typeof v !== "string") throw new WireError(`${at}.error`, "a string or null", v);
  return { error: v };
}

export function parsePosition(value: unknown, at = "position"): Position {
  const o = object(value, at);
  return { line: integer(o, "line", at), character: integer(o, "character", at, 0) };
}

export function parseRange(value: unknown, at = "range"): Range {
  const o = object(value, at);
  return { start: parsePosition(o.start, `${at}.start`), end: parsePosition(o.end, `${at}.end`) };
}

function parseSignals(value: unknown, at: string): Signals {
  if (value === undefined) return { semantic: null, lexical: null };
  const o = object(value, at);
  return { semantic: nullableInteger(o, "semantic", at), lexical: nullableInteger(o, "lexical", at) };
}

const stringItem = (v: unknown, at: string): string => {
  if (typeof v !== "string") throw new WireError(at, "a string", v);
  return v;
};

function nullableNumber(o: Fields, key: string, at: string): number | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isFinite(v)) throw new WireError(`${at}.${key}`, "a number or null", v);
  return v;
}

/** A hit's `explain`: kept only when sent (the server sends it, null, unless asked). */
function explainField(o: Fields, at: string): { explain?: Explain | null } {
  const v = o.explain;
  if (v === undefined) return {};
  if (v === null) return { explain: null };
  const e = object(v, `${at}.explain`);
  const where = `${at}.explain`;
  return {
    explain: {
      semantic: number(e, "semantic", where), semanticWeight: number(e, "semanticWeight", where),
      lexical: number(e, "lexical", where), lexicalWeight: number(e, "lexicalWeight", where),
      cosine: nullableNumber(e, "cosine", where), coverage: nullableNumber(e, "coverage", where),
      bm25Share: nullableNumber(e, "bm25Share", where), sections: e.sections === undefined ? 0 : number(e, "sections", where),
    },
  };
}

function parseSection(value: unknown, at: string): Section {
  const o = object(value, at);
  return {
    range: parseRange(o.range, `${at}.range`),
    breadcrumb: string(o, "breadcrumb", at),
    snippet: string(o, "snippet", at),
    score: number(o, "score", at),
  };
}

export function parseHit(value: unknown, at = "hit"): Hit {
  const o = object(value, at);
  return {
    uri: string(o, "uri", at),
    path: string(o, "path", at),
    root: string(o, "root", at),
    range: parseRange(o.range, `${at}.range`),
    title: string(o, "title", at),
    breadcrumb: string(o, "breadcrumb", at),
    snippet: string(o, "snippet", at),
    score: number(o, "score", at),
    signals: parseSignals(o.signals, `${at}.signals`),
    reasons: array(o, "reasons", at, stringItem, []),
    more: integer(o, "more", at, 0),
    sections: array(o, "sections", at, parseSection, []),
    ...explainField(o, at),
  };
}

function parseIndexInfo(value: unknown, at: string): IndexInfo {
  const o = object(value, at);
  const info: IndexInfo = { state: state(o, at), pending: integer(o, "pending", at, 0), ...errorField(o, at) };
  if (typeof o.embedded === "number") info.embedded = o.embedded;
  return info;
}

/** The answer of `kb/search` and `kb/related`. */
export function parseSearchResult(value: unknown): SearchResult {
  const at = "result";
  const o = object(value, at);
  return {
    hits: array(o, "hits", at, parseHit),
    tookMs: number(o, "tookMs", at),
    index: parseIndexInfo(o.index, `${at}.index`),
  };
}

function parseSqlite(value: unknown, at: string): SqliteInfo {
  const o = object(value, at);
  return { module: string(o, "module", at), version: string(o, "version", at), vec: string(o, "vec", at) };
}

function parseProblem(value: unknown, at: string): FileProblem {
  const o = object(value, at);
  return { path: string(o, "path", at), reason: string(o, "reason", at) };
}

function parseRootStatus(value: unknown, at: string): RootStatus {
  const o = object(value, at);
  return {
    uri: string(o, "uri", at),
    store: string(o, "store", at),
    storeBytes: integer(o, "storeBytes", at),
    files: integer(o, "files", at),
    chunks: integer(o, "chunks", at),
    model: string(o, "model", at),
    dimension: integer(o, "dimension", at),
    sqlite: parseSqlite(o.sqlite, `${at}.sqlite`),
    errors: array(o, "errors", at, parseProblem),
    ...errorField(o, at),
  };
}

/** The answer of `kb/status`. */
export function parseStatusResult(value: unknown): StatusResult {
  const at = "result";
  const o = object(value, at);
  return {
    version: string(o, "version", at),
    state: state(o, at),
    queue: integer(o, "queue", at),
    model: string(o, "model", at),
    dimension: integer(o, "dimension", at),
    embeddedSinceStart: integer(o, "embeddedSinceStart", at),
    reusedSinceStart: integer(o, "reusedSinceStart", at),
    roots: array(o, "roots", at, parseRootStatus),
    ...errorField(o, at),
    ...embeddingFields(o),
  };
}

/** The answer of `kb/reindex`. */
export function parseReindexResult(value: unknown): ReindexResult {
  const o = object(value, "result");
  return { queued: integer(o, "queued", "result") };
}

/** The `kb/indexStatus` notification. */
export function parseIndexStatus(value: unknown): IndexStatusNotification {
  const at = "params";
  const o = object(value, at);
  return {
    state: state(o, at),
    pending: integer(o, "pending", at),
    files: integer(o, "files", at),
    chunks: integer(o, "chunks", at),
    message: o.message === undefined ? "" : string(o, "message", at),
    ...errorField(o, at),
    ...embeddingFields(o),
  };
}

/** The embedding pass's optional fields of `kb/indexStatus` (a server before them sends none). */
function embeddingFields(o: Record<string, unknown>): Pick<IndexStatusNotification, "embedded" | "waiting" | "rate" | "etaSeconds"> {
  const out: Pick<IndexStatusNotification, "embedded" | "waiting" | "rate" | "etaSeconds"> = {};
  if (typeof o.embedded === "number") out.embedded = o.embedded;
  if (typeof o.waiting === "number") out.waiting = o.waiting;
  if (typeof o.rate === "number") out.rate = o.rate;
  if (typeof o.etaSeconds === "number" || o.etaSeconds === null) out.etaSeconds = o.etaSeconds;
  return out;
}

function parseBacklink(value: unknown, at: string): Backlink {
  const o = object(value, at);
  return {
    uri: string(o, "uri", at),
    path: string(o, "path", at),
    root: string(o, "root", at),
    range: parseRange(o.range, `${at}.range`),
    title: string(o, "title", at),
    breadcrumb: string(o, "breadcrumb", at),
    context: string(o, "context", at),
  };
}

/** The answer of `kb/backlinks`. */
export function parseBacklinksResult(value: unknown): BacklinksResult {
  const at = "result";
  const o = object(value, at);
  return { backlinks: array(o, "backlinks", at, parseBacklink), notes: integer(o, "notes", at) };
}
