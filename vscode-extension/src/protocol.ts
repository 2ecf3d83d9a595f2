// Wire types of the `kb/*` protocol (docs/protocol.md, docs/protocol.schema.json), the contract
// constants (modes, limit range, query cap: the TypeScript's one copy of server/kbls/limits.py),
// the request builders and the typed requests. Kept free of any `vscode` import so the unit and
// protocol tests can load the compiled module under plain node; test/unit/schema.test.js checks
// the builders and parsers against the JSON Schema the server exports.
import { MAX_LIMIT, MAX_QUERY_LENGTH, MAX_TAGS, MIN_LIMIT, SEARCH_MODES, type IndexState, type SearchMode } from "./limits";
import { parseReindexResult, parseSearchResult, parseStatusResult, WireError } from "./wireParse";

export { INDEX_STATES, MAX_LIMIT, MAX_QUERY_LENGTH, MAX_TAGS, MIN_LIMIT, SEARCH_MODES } from "./limits";
export type { IndexState, SearchMode } from "./limits";

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface Signals {
  semantic: number | null;
  lexical: number | null;
}

/** Why a hit ranked there (`kb/search` with `explain`): each signal's evidence and weight. */
export interface Explain {
  semantic: number;
  semanticWeight: number;
  lexical: number;
  lexicalWeight: number;
  cosine: number | null;
  coverage: number | null;
  bm25Share: number | null;
  sections: number;
}

/** Another matching section of a hit's note (`groupByFile`), best first. */
export interface Section {
  range: Range;
  breadcrumb: string;
  /** "" unless the request asked for `sectionSnippets`. */
  snippet: string;
  score: number;
}

export interface Hit {
  uri: string;
  path: string;
  root: string;
  range: Range;
  title: string;
  breadcrumb: string;
  snippet: string;
  score: number;
  signals: Signals;
  reasons: string[];
  /** `groupByFile`: how many other sections of the note matched. */
  more: number;
  /** `groupByFile`: the best of them (at most 10), best first. */
  sections: Section[];
  /** Only when the request asked for it (`explain: true`); null or absent otherwise. */
  explain?: Explain | null;
}

export interface IndexInfo {
  state: IndexState;
  pending: number;
  error?: string | null;
  /** Share (0–1) of the chunks with their vector: below 1 the answer is partial (words for every note). */
  embedded?: number;
}

export interface SearchFilters {
  paths?: string[];
  tags?: string[];
  types?: string[];
}

export interface SearchParams {
  query: string;
  limit?: number;
  mode?: SearchMode;
  filters?: SearchFilters;
  groupByFile?: boolean;
  /** With `groupByFile`: the hits' `sections` carry their snippets. */
  sectionSnippets?: boolean;
}

export interface SearchResult {
  hits: Hit[];
  tookMs: number;
  index: IndexInfo;
}

export interface RelatedParams {
  uri: string;
  position?: Position;
  limit?: number;
}

export interface SqliteInfo {
  module: string;
  version: string;
  vec: string;
}

export interface FileProblem {
  path: string;
  reason: string;
}

export interface RootStatus {
  uri: string;
  store: string;
  storeBytes: number;
  files: number;
  chunks: number;
  model: string;
  dimension: number;
  sqlite: SqliteInfo;
  errors: FileProblem[];
  error?: string | null;
}

export interface StatusResult {
  version: string;
  state: IndexState;
  queue: number;
  model: string;
  dimension: number;
  embeddedSinceStart: number;
  reusedSinceStart: number;
  roots: RootStatus[];
  error?: string | null;
  /** The embedding pass, as in `kb/indexStatus`. */
  embedded?: number;
  waiting?: number;
  rate?: number;
  etaSeconds?: number | null;
}

export interface ReindexParams {
  force?: boolean;
  uris?: string[];
}

export interface ReindexResult {
  queued: number;
}

export interface IndexStatusNotification {
  state: IndexState;
  pending: number;
  files: number;
  chunks: number;
  message: string;
  error?: string | null;
  /** Share (0–1) of the chunks with their vector: below 1, every note is found by its words, that share by meaning. */
  embedded?: number;
  /** Chunks waiting for their vector, chunks embedded per second lately, seconds left at that rate (null: unknown). */
  waiting?: number;
  rate?: number;
  etaSeconds?: number | null;
}

/** `kb/tags`: the tags of the client's folders with their note counts, most used first. */
export interface TagsParams {
  prefix?: string;
  limit?: number;
}

export interface Tag {
  name: string;
  count: number;
}

export interface TagsResult {
  tags: Tag[];
  total: number;
  index: IndexInfo;
}

/** `kb/notes`: a page of the notes, most recently modified first. */
export interface NotesParams {
  limit?: number | null;
  offset?: number;
  filters?: SearchFilters | null;
}

export interface Note {
  uri: string;
  path: string;
  root: string;
  title: string;
  tags: string[];
  /** milliseconds since the Unix epoch */
  modified: number;
  snippet: string;
}

export interface NotesResult {
  notes: Note[];
  total: number;
  index: IndexInfo;
}

/** `kb/backlinks`: the links from other notes to one note. */
export interface BacklinksParams {
  uri: string;
}

export interface Backlink {
  uri: string;
  path: string;
  root: string;
  /** the link's text, in the client's position units */
  range: Range;
  title: string;
  breadcrumb: string;
  context: string;
}

export interface BacklinksResult {
  backlinks: Backlink[];
  /** how many notes link here */
  notes: number;
}

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
