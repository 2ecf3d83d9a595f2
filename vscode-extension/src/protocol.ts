// The `kb/*` protocol (docs/protocol.md): its wire types (generated from
// docs/protocol.schema.json), the contract constants (modes, limit range, query cap: the
// TypeScript's one copy of server/kbls/limits.py), the request builders and the typed requests. Kept free of any `vscode` import so the unit and
// protocol tests can load the compiled module under plain node; test/unit/schema.test.js checks
// the builders and parsers against the JSON Schema the server exports.
import type {
  BacklinksParams,
  NotesParams,
  Position,
  ReindexParams,
  RelatedParams,
  ReindexResult,
  SearchFilters,
  SearchParams,
  SearchResult,
  StatusResult,
  TagsParams,
} from "./generated/wire";
import { MAX_LIMIT, MAX_QUERY_LENGTH, MAX_TAGS, MIN_LIMIT, SEARCH_MODES, type SearchMode } from "./limits";
import { parseReindexResult, parseSearchResult, parseStatusResult, WireError } from "./wireParse";

export { INDEX_STATES, MAX_LIMIT, MAX_QUERY_LENGTH, MAX_TAGS, MIN_LIMIT, SEARCH_MODES } from "./limits";
export type { IndexState, SearchMode } from "./limits";

// The wire types, generated from the schema at build time (scripts/gen-protocol.mjs).
export type {
  Backlink,
  BacklinksParams,
  BacklinksResult,
  Explain,
  FileProblem,
  Hit,
  IndexInfo,
  Note,
  NotesParams,
  NotesResult,
  Position,
  Range,
  ReindexParams,
  ReindexResult,
  RelatedParams,
  RootStatus,
  SearchFilters,
  SearchParams,
  SearchResult,
  Section,
  Signals,
  SqliteInfo,
  StatusResult,
  Tag,
  TagsParams,
  TagsResult,
} from "./generated/wire";
export type { IndexStatus as IndexStatusNotification } from "./generated/wire";

export const Methods = {
  search: "kb/search",
  related: "kb/related",
  status: "kb/status",
  reindex: "kb/reindex",
  tags: "kb/tags",
  notes: "kb/notes",
  backlinks: "kb/backlinks",
  indexStatus: "kb/indexStatus",
} as const;

/** A limit the server accepts: an integer in MIN_LIMIT..MAX_LIMIT (a setting may say 0 or 1e6). */
export function clampLimit(limit: number): number {
  if (!Number.isFinite(limit)) return MAX_LIMIT;
  return Math.min(MAX_LIMIT, Math.max(MIN_LIMIT, Math.round(limit)));
}

/** Trims a query to what the server accepts; syntax such as `tag:` passes through untouched. */
export function normalizeQuery(raw: string): string {
  const q = raw.trim();
  return q.length > MAX_QUERY_LENGTH ? q.slice(0, MAX_QUERY_LENGTH) : q;
}

export function isSearchMode(value: unknown): value is SearchMode {
  return typeof value === "string" && (SEARCH_MODES as readonly string[]).includes(value);
}

export interface SearchOptions {
  limit?: number;
  mode?: SearchMode;
  filters?: SearchFilters;
  groupByFile?: boolean;
  sectionSnippets?: boolean;
}

/** The params of `kb/search`: the query cut to the cap, the limit clamped, unset options left out. */
export function searchParams(query: string, options: SearchOptions = {}): SearchParams {
  const params: SearchParams = { query: normalizeQuery(query) };
  if (options.limit !== undefined) params.limit = clampLimit(options.limit);
  if (options.mode !== undefined) {
    if (!isSearchMode(options.mode)) throw new Error(`unknown search mode "${String(options.mode)}" (one of ${SEARCH_MODES.join(", ")})`);
    params.mode = options.mode;
  }
  if (options.filters) params.filters = options.filters;
  if (options.groupByFile !== undefined) params.groupByFile = options.groupByFile;
  if (options.sectionSnippets) params.sectionSnippets = true;
  return params;
}

/** The params of `kb/related`: the note, the cursor when there is one, the clamped limit. */
export function relatedParams(uri: string, position: Position | undefined, limit: number): RelatedParams {
  const params: RelatedParams = { uri, limit: clampLimit(limit) };
  if (position) params.position = { line: Math.max(0, position.line), character: Math.max(0, position.character) };
  return params;
}

/** The params of `kb/reindex`. */
export function reindexParams(options: { force?: boolean; uris?: string[] } = {}): ReindexParams {
  const params: ReindexParams = {};
  if (options.force !== undefined) params.force = options.force;
  if (options.uris) params.uris = options.uris;
  return params;
}

/** The params of `kb/tags` (no VS Code command sends it yet; the Neovim plugin's :KbTags does). */
export function tagsParams(options: { prefix?: string; limit?: number } = {}): TagsParams {
  const params: TagsParams = {};
  if (options.prefix) params.prefix = normalizeQuery(options.prefix);
  if (options.limit !== undefined) params.limit = Number.isFinite(options.limit) ? Math.min(MAX_TAGS, Math.max(1, Math.round(options.limit))) : MAX_TAGS;
  return params;
}

/** The params of `kb/notes`: the limit clamped, the offset never negative. */
export function notesParams(options: { limit?: number; offset?: number; filters?: SearchFilters } = {}): NotesParams {
  const params: NotesParams = {};
  if (options.limit !== undefined) params.limit = clampLimit(options.limit);
  if (options.offset !== undefined) params.offset = Math.max(0, Math.round(options.offset));
  if (options.filters) params.filters = options.filters;
  return params;
}

/** The params of `kb/backlinks`. */
export function backlinksParams(uri: string): BacklinksParams {
  return { uri };
}

/** JSON-RPC error code the server answers a cancelled request with. */
export const REQUEST_CANCELLED = -32800;

/** The structural cancellation token both vscode and vscode-jsonrpc accept. */
export interface CancellationTokenLike {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: (e: unknown) => unknown): { dispose(): unknown };
}

/** What the typed helpers below need: `LanguageClient` and a vscode-jsonrpc connection both fit. */
export interface RequestSender {
  sendRequest<R>(method: string, params: unknown, token?: CancellationTokenLike): Promise<R>;
}

/**
 * Sends with the token only when there is one: vscode-jsonrpc takes a trailing `undefined` for a
 * second parameter and would then send the params as an array.
 */
function send<R>(
  conn: RequestSender,
  method: string,
  params: unknown,
  token: CancellationTokenLike | undefined,
): Promise<R> {
  return token ? conn.sendRequest<R>(method, params, token) : conn.sendRequest<R>(method, params);
}

/** Sends a request and reads its answer with `parse`; a malformed answer names the method and field. */
async function request<R>(
  conn: RequestSender,
  method: string,
  params: unknown,
  token: CancellationTokenLike | undefined,
  parse: (value: unknown) => R,
): Promise<R> {
  const value = await send<unknown>(conn, method, params, token);
  try {
    return parse(value);
  } catch (err) {
    if (err instanceof WireError) err.message = `${method}: ${err.message}`;
    throw err;
  }
}

export function search(
  conn: RequestSender,
  params: SearchParams,
  token?: CancellationTokenLike,
): Promise<SearchResult> {
  return request(conn, Methods.search, params, token, parseSearchResult);
}

export function related(
  conn: RequestSender,
  params: RelatedParams,
  token?: CancellationTokenLike,
): Promise<SearchResult> {
  return request(conn, Methods.related, params, token, parseSearchResult);
}

export function status(conn: RequestSender, token?: CancellationTokenLike): Promise<StatusResult> {
  return request(conn, Methods.status, {}, token, parseStatusResult);
}

export function reindex(
  conn: RequestSender,
  params: ReindexParams,
  token?: CancellationTokenLike,
): Promise<ReindexResult> {
  return request(conn, Methods.reindex, params, token, parseReindexResult);
}

/** True for the error a request gets when it was cancelled (by us or superseded). */
export function isCancellation(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { code?: unknown; name?: unknown };
  return e.code === REQUEST_CANCELLED || e.name === "Canceled" || e.name === "CancellationError";
}
