// Wire types of the `kb/*` protocol (docs/protocol.md). Kept free of any `vscode` import so the
// unit and protocol tests can load the compiled module under plain node.

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
  more: number;
}

export type IndexState = "loading" | "indexing" | "ready" | "error";

export interface IndexInfo {
  state: IndexState;
  pending: number;
}

export interface SearchFilters {
  paths?: string[];
  tags?: string[];
  types?: string[];
}

export type SearchMode = "hybrid" | "semantic" | "lexical";

export interface SearchParams {
  query: string;
  limit?: number;
  mode?: SearchMode;
  filters?: SearchFilters;
  groupByFile?: boolean;
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

export interface RootStatus {
  uri: string;
  store: string;
  storeBytes: number;
  files: number;
  chunks: number;
  model: string;
  dimension: number;
  sqlite?: { module?: string; version?: string; vec?: string };
  errors: { path: string; reason: string }[];
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
  files?: number;
  chunks?: number;
  message?: string;
}

export const Methods = {
  search: "kb/search",
  related: "kb/related",
  status: "kb/status",
  reindex: "kb/reindex",
  indexStatus: "kb/indexStatus",
} as const;

/** Maximum query length the server accepts (characters). */
export const MAX_QUERY_LENGTH = 4096;

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

export function search(
  conn: RequestSender,
  params: SearchParams,
  token?: CancellationTokenLike,
): Promise<SearchResult> {
  return send<SearchResult>(conn, Methods.search, params, token);
}

export function related(
  conn: RequestSender,
  params: RelatedParams,
  token?: CancellationTokenLike,
): Promise<SearchResult> {
  return send<SearchResult>(conn, Methods.related, params, token);
}

export function status(conn: RequestSender, token?: CancellationTokenLike): Promise<StatusResult> {
  return send<StatusResult>(conn, Methods.status, {}, token);
}

export function reindex(
  conn: RequestSender,
  params: ReindexParams,
  token?: CancellationTokenLike,
): Promise<ReindexResult> {
  return send<ReindexResult>(conn, Methods.reindex, params, token);
}

/** True for the error a request gets when it was cancelled (by us or superseded). */
export function isCancellation(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { code?: unknown; name?: unknown };
  return e.code === REQUEST_CANCELLED || e.name === "Canceled" || e.name === "CancellationError";
}
