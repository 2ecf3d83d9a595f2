// Contract constants of the kb/* protocol, the TypeScript's one copy of server/kbls/limits.py:
// the search modes, the limit range and the query cap. test/unit/schema.test.js checks them
// against docs/protocol.schema.json and package.json's settings, so a change on either side
// fails a test.

/** The search modes the server knows (`kbls.limits.Mode`). */
export const SEARCH_MODES = ["hybrid", "semantic", "lexical"] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** Results per request: `limit` of kb/search and kb/related (`kbls.limits.MIN_LIMIT/MAX_LIMIT`). */
export const MIN_LIMIT = 1;
export const MAX_LIMIT = 200;

/** Maximum query length the server accepts, in characters (`kbls.limits.MAX_QUERY_CHARS`). */
export const MAX_QUERY_LENGTH = 4096;

/** The states of the index (`state` of kb/status, kb/indexStatus and a search's `index`). */
export const INDEX_STATES = ["loading", "indexing", "ready", "error"] as const;
export type IndexState = (typeof INDEX_STATES)[number];

/** Tags per `kb/tags` answer: its `limit` is 1..MAX_TAGS (`kbls.limits.MAX_TAGS`). */
export const MAX_TAGS = 1000;
