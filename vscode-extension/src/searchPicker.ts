// The logic behind KB: Search and KB: Related Notes, free of `vscode` so node:test covers it:
// turning hits into picker items, and a controller that debounces typing, cancels superseded
// requests and never lets an older answer replace a newer one. `pickerUi.ts` wires it to a
// QuickPick.
import { CancellationSource } from "./cancellation";
import { isCancellation, normalizeQuery, type CancellationTokenLike, type Hit, type Position, type Range } from "./protocol";

export { normalizeQuery };

export interface HitItem {
  label: string;
  description: string;
  detail: string;
  /** The server ranks; the picker must not hide a hit because its label does not match. */
  alwaysShow: true;
  hit: Hit;
}

export interface FormatOptions {
  /** Maximum characters of the snippet shown as the item's detail. */
  maxDetail?: number;
  /** Prefix the detail with the hit's `reasons` (KB: Related Notes). */
  showReasons?: boolean;
}

const DEFAULT_MAX_DETAIL = 220;

/** Collapses whitespace (snippets span lines) and cuts at a word boundary with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, Math.max(1, max - 1));
  const space = cut.lastIndexOf(" ");
  const head = space > max * 0.6 ? cut.slice(0, space) : cut;
  return head.replace(/[\s.,;:…-]+$/, "") + "…";
}

export function basename(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

/**
 * The breadcrumb below the title: "Borrowing > Mutable references" under the title "Borrowing"
 * becomes "Mutable references". Returns "" when the breadcrumb adds nothing.
 */
export function sectionOf(title: string, breadcrumb: string): string {
  const crumb = breadcrumb.trim();
  if (!crumb || crumb === title) return "";
  for (const sep of [" > ", " › "]) {
    const prefix = title + sep;
    if (crumb.startsWith(prefix)) return crumb.slice(prefix.length);
  }
  return crumb;
}

/** The breadcrumb as shown: sections joined with " › ". */
export function prettyCrumb(crumb: string): string {
  return crumb.split(/\s+>\s+/).join(" › ");
}

export function hitToItem(hit: Hit, options: FormatOptions = {}): HitItem {
  const maxDetail = options.maxDetail ?? DEFAULT_MAX_DETAIL;
  const title = hit.title?.trim() || basename(hit.path || hit.uri);
  const section = prettyCrumb(sectionOf(title, hit.breadcrumb ?? ""));
  const where = hit.path || hit.uri;
  const more = hit.more > 0 ? ` (+${hit.more} more)` : "";
  const description = (section ? `§ ${section} — ${where}` : where) + more;
  let detail = oneLine(hit.snippet ?? "", maxDetail);
  if (options.showReasons && hit.reasons && hit.reasons.length > 0) {
    const why = hit.reasons.join("; ");
    detail = detail ? `${why} — ${detail}` : why;
    detail = oneLine(detail, maxDetail + why.length);
  }
  return { label: title, description, detail, alwaysShow: true, hit };
}

export function hitsToItems(hits: readonly Hit[], options: FormatOptions = {}): HitItem[] {
  return hits.map((h) => hitToItem(h, options));
}

/**
 * Where the editor goes for a hit or a section: the cursor at the start of its first line (its
 * heading), nothing selected, so the next key types instead of replacing the section.
 */
export function cursorForRange(range: Range): Position {
  return { line: Math.max(0, range.start.line), character: 0 };
}

/** One row of the search picker grouped by note: a note, one of its other sections, or "+N more". */
export interface PickRow {
  label: string;
  description: string;
  detail?: string;
  alwaysShow: true;
  /** The note's hit (its URI, title, path). */
  hit: Hit;
  /** Where Enter goes: the hit's range, or the section's. */
  range: Range;
  /** On a "+N more sections" row: the note it expands in place (its URI). */
  expands?: string;
  /** On a note row with other sections: its URI, for the expand button. */
  expandable?: string;
}

/** The note row's key in the set of expanded notes. */
export function noteKey(hit: Hit): string {
  return hit.uri;
}

/**
 * The rows of grouped hits (`groupByFile`): each note once, at its best section; under a note
 * whose other sections matched, a "+N more sections" row naming them, or, once that note is in
 * `expanded`, one row per section (best first), each opening at its own section.
 */
export function groupedRows(hits: readonly Hit[], expanded: ReadonlySet<string>, options: FormatOptions = {}): PickRow[] {
  const maxDetail = options.maxDetail ?? DEFAULT_MAX_DETAIL;
  const rows: PickRow[] = [];
  for (const hit of hits) {
    const item = hitToItem({ ...hit, more: 0 }, options);
    const sections = hit.sections ?? [];
    const key = noteKey(hit);
    rows.push({ ...item, range: hit.range, ...(hit.more > 0 ? { expandable: key } : {}) });
    if (hit.more <= 0) continue;
    const names = sections.map((s) => prettyCrumb(sectionOf(item.label, s.breadcrumb)) || item.label);
    const unlisted = hit.more - sections.length;
    if (!expanded.has(key) || sections.length === 0) {
      const count = `+${hit.more} more section${hit.more === 1 ? "" : "s"}`;
      rows.push({
        label: `$(unfold) ${count}`,
        description: oneLine(names.join(" · "), maxDetail),
        alwaysShow: true,
        hit,
        range: sections[0]?.range ?? hit.range,
        expands: key,
      });
      continue;
    }
    sections.forEach((section, i) => {
      const last = i === sections.length - 1 && unlisted > 0 ? ` (+${unlisted} more in the note)` : "";
      rows.push({
        label: `$(indent) § ${names[i]}`,
        description: `${section.score.toFixed(2)} · ${item.label}${last}`,
        detail: oneLine(section.snippet ?? "", maxDetail),
        alwaysShow: true,
        hit,
        range: section.range,
      });
    });
  }
  return rows;
}

/**
 * The notes of `expanded` that a new answer to the same query (asked again once the index is
 * ready) still holds with other sections: they stay expanded, as the user left them.
 */
export function stillExpanded(expanded: ReadonlySet<string>, hits: readonly Hit[]): Set<string> {
  return new Set(hits.filter((h) => h.more > 0 && expanded.has(noteKey(h))).map(noteKey));
}

/** The row of `rows` that stands where `row` stood (the same label, note and start line), if any. */
export function sameRow<T extends { label: string; hit?: Hit; range?: Range }>(rows: readonly T[], row: T | undefined): T | undefined {
  if (!row) return undefined;
  return rows.find((r) => r.label === row.label && r.hit?.uri === row.hit?.uri && r.range?.start.line === row.range?.start.line);
}

/** True when a grouped hit lists sections the answer sent without their snippets. */
export function lacksSectionSnippets(hit: Hit): boolean {
  return (hit.sections ?? []).some((s) => !s.snippet);
}

/**
 * `shown` with the snippets of its hits' sections taken from `answer` (the same query asked with
 * `sectionSnippets`), matched by note and section start line; a section the answer does not
 * list keeps what it had.
 */
export function withSectionSnippets(shown: readonly Hit[], answer: readonly Hit[]): Hit[] {
  const snippets = new Map<string, string>();
  for (const hit of answer) for (const s of hit.sections ?? []) if (s.snippet) snippets.set(`${noteKey(hit)}\n${s.range.start.line}`, s.snippet);
  return shown.map((hit) => {
    if (!lacksSectionSnippets(hit)) return hit;
    const sections = hit.sections.map((s) => ({ ...s, snippet: s.snippet || (snippets.get(`${noteKey(hit)}\n${s.range.start.line}`) ?? "") }));
    return { ...hit, sections };
  });
}

/** Ungrouped hits as rows: one per section, as the server sent them. */
export function sectionRows(hits: readonly Hit[], options: FormatOptions = {}): PickRow[] {
  return hits.map((hit) => ({ ...hitToItem(hit, options), range: hit.range }));
}

/** What the picker shows when there are no hits to show. */
export function emptyMessage(query: string, indexState?: string): string {
  if (!query.trim()) return "Type to search your notes (tag:NAME, path:GLOB and type:NAME narrow it)";
  if (indexState === "loading") return `No results for "${query}" yet — the model is still loading`;
  if (indexState === "indexing") return `No results for "${query}" yet — indexing is in progress`;
  return `No results for "${query}"`;
}

/**
 * The picker's title for results given under `indexState`: hits found while the model loads are
 * lexical only and hits found mid-indexing may miss notes, so the title says so until the index is
 * ready (the picker asks again then).
 */
export function searchTitle(indexState?: string): string {
  if (indexState === "loading") return "KB: Search — partial results (the model is still loading)";
  if (indexState === "indexing") return "KB: Search — partial results (indexing is in progress)";
  if (indexState === "error") return "KB: Search — the index has a problem (see KB: Show Status)";
  return "KB: Search";
}

/**
 * True when results shown under `shownState` (the `index.state` of their answer) should be asked
 * again now that the index reports `newState`: answers given while the model was loading are
 * lexical only, and answers given mid-indexing may miss notes.
 */
export function shouldRefresh(shownState: string | undefined, newState: string): boolean {
  return newState === "ready" && shownState !== undefined && shownState !== "ready";
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export interface SearchControllerOptions<R> {
  debounceMs: number;
  /** Runs one query; must honour the token (the controller cancels superseded queries). */
  run(query: string, token: CancellationTokenLike): Promise<R>;
  /** The answer to the latest query. Never called for a superseded one. */
  onResults(query: string, result: R): void;
  /** The query was emptied: show the prompt instead of results. */
  onCleared?(): void;
  onError?(query: string, error: unknown): void;
  onBusy?(busy: boolean): void;
  timers?: Timers;
}

/**
 * Debounces queries and keeps only the newest one alive: every new keystroke cancels the request
 * in flight and any answer that arrives for an older query is dropped, so results never flicker
 * back to what was typed before.
 */
export class SearchController<R> {
  private generation = 0;
  private timer: unknown;
  private inFlight: CancellationSource | undefined;
  private disposed = false;
  private readonly timers: Timers;
  /** Number of requests actually started (for tests and tracing). */
  started = 0;
  /** The query whose results are on screen. */
  shownQuery: string | undefined;

  constructor(private readonly options: SearchControllerOptions<R>) {
    this.timers = options.timers ?? realTimers;
  }

  /** Called on every change of the input. */
  update(raw: string): void {
    if (this.disposed) return;
    const query = normalizeQuery(raw);
    const generation = ++this.generation;
    this.cancelPending();
    if (!query) {
      this.shownQuery = undefined;
      this.options.onBusy?.(false);
      this.options.onCleared?.();
      return;
    }
    this.options.onBusy?.(true);
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.fire(generation, query);
    }, this.options.debounceMs);
  }

  /** Runs the query now (no debounce), e.g. for an initial value. */
  runNow(raw: string): Promise<void> {
    if (this.disposed) return Promise.resolve();
    const query = normalizeQuery(raw);
    const generation = ++this.generation;
    this.cancelPending();
    if (!query) {
      this.options.onCleared?.();
      return Promise.resolve();
    }
    this.options.onBusy?.(true);
    return this.fire(generation, query);
  }

  private async fire(generation: number, query: string): Promise<void> {
    if (this.disposed || generation !== this.generation) return;
    const source = new CancellationSource();
    this.inFlight = source;
    this.started++;
    try {
      const result = await this.options.run(query, source.token);
      if (this.disposed || generation !== this.generation || source.isCancelled) return;
      this.shownQuery = query;
      this.options.onResults(query, result);
    } catch (err) {
      if (this.disposed || generation !== this.generation || source.isCancelled || isCancellation(err)) return;
      this.options.onError?.(query, err);
    } finally {
      if (this.inFlight === source) this.inFlight = undefined;
      source.dispose();
      if (!this.disposed && generation === this.generation) this.options.onBusy?.(false);
    }
  }

  private cancelPending(): void {
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.inFlight) {
      this.inFlight.cancel();
      this.inFlight = undefined;
    }
  }

  dispose(): void {
    this.disposed = true;
    this.cancelPending();
  }
}
