// The logic behind the Related Notes view that follows the cursor, free of `vscode` so node:test
// covers it: which section of a markdown note a line is in (the server answers `kb/related` for
// the section holding the cursor, so the view only asks again when the cursor crosses a heading),
// and a follower that debounces cursor moves, cancels the request in flight when the cursor moves
// to another section and never lets an older answer replace a newer one. `relatedView.ts` wires
// it to a TreeView.
import { CancellationSource } from "./cancellation";
import { isCancellation, type CancellationTokenLike, type Position } from "./protocol";
import type { Timers } from "./searchPicker";

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX_HEADING = /^ {0,3}#{1,6}(\s|$)/;

/**
 * The 0-based lines of a markdown note's ATX headings (`# …` to `###### …`), in order. Lines in a
 * front matter block or a fenced code block are not headings. `lineAt(i)` gives line i's text.
 */
export function headingLines(lineCount: number, lineAt: (line: number) => string): number[] {
  const headings: number[] = [];
  let fence: string | undefined;
  let start = 0;
  if (lineCount > 0 && lineAt(0).trimEnd() === "---") {
    for (let i = 1; i < lineCount; i++) {
      if (/^(---|\.\.\.)\s*$/.test(lineAt(i))) {
        start = i + 1;
        break;
      }
    }
  }
  for (let i = start; i < lineCount; i++) {
    const text = lineAt(i);
    const open = FENCE.exec(text);
    if (fence !== undefined) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length && text.trim() === open[1]) fence = undefined;
      continue;
    }
    if (open) {
      fence = open[1];
      continue;
    }
    if (ATX_HEADING.test(text)) headings.push(i);
  }
  return headings;
}

/** The section a line is in: the line of the last heading at or above it, -1 above the first. */
export function sectionStart(headings: readonly number[], line: number): number {
  let lo = 0;
  let hi = headings.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (headings[mid] <= line) {
      found = headings[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** Where the cursor is: the note, the position, and a key naming its section. */
export interface CursorPlace {
  uri: string;
  position: Position;
  /** Equal keys ask the server the same question (same note, same section, same saved text). */
  sectionKey: string;
}

export interface RelatedFollowerOptions<R> {
  debounceMs: number;
  /** Asks the server for the place; must honour the token (superseded requests are cancelled). */
  run(place: CursorPlace, token: CancellationTokenLike): Promise<R>;
  /** The answer for the newest place. Never called for a superseded one. */
  onResults(place: CursorPlace, result: R): void;
  onError?(place: CursorPlace, error: unknown): void;
  onBusy?(busy: boolean): void;
  timers?: Timers;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/**
 * Follows the cursor: `moved` on every cursor move; after `debounceMs` of stillness the place's
 * section is asked for, unless its answer is already shown or on its way. Moving to another
 * section cancels the request in flight at once; moving within the section leaves it running.
 */
export class RelatedFollower<R> {
  private generation = 0;
  private timer: unknown;
  private inFlight: { source: CancellationSource; key: string } | undefined;
  private disposed = false;
  private readonly timers: Timers;
  private debounceMs: number;
  /** The section key whose answer is shown. */
  shownKey: string | undefined;
  /** Requests actually sent (for tests and tracing). */
  started = 0;

  constructor(private readonly options: RelatedFollowerOptions<R>) {
    this.timers = options.timers ?? realTimers;
    this.debounceMs = options.debounceMs;
  }

  /** A new debounce (the setting changed); applies from the next move. */
  setDebounce(ms: number): void {
    this.debounceMs = Math.max(0, ms);
  }

  /** The cursor moved (or another note became active). */
  moved(place: CursorPlace): void {
    if (this.disposed) return;
    this.clearTimer();
    if (this.inFlight && this.inFlight.key !== place.sectionKey) this.cancelInFlight();
    if (place.sectionKey === this.shownKey || this.inFlight?.key === place.sectionKey) return;
    const generation = ++this.generation;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.fire(generation, place);
    }, this.debounceMs);
  }

  /** Asks now for the place, even when its answer is shown (a refresh, a saved note). */
  refresh(place: CursorPlace): Promise<void> {
    if (this.disposed) return Promise.resolve();
    this.clearTimer();
    this.cancelInFlight();
    this.shownKey = undefined;
    return this.fire(++this.generation, place);
  }

  /** Forgets the shown answer and stops waiting (no note to follow). */
  reset(): void {
    this.clearTimer();
    this.cancelInFlight();
    this.shownKey = undefined;
    this.generation++;
    this.options.onBusy?.(false);
  }

  private async fire(generation: number, place: CursorPlace): Promise<void> {
    if (this.disposed || generation !== this.generation) return;
    this.cancelInFlight();
    const source = new CancellationSource();
    const flight = { source, key: place.sectionKey };
    this.inFlight = flight;
    this.started++;
    this.options.onBusy?.(true);
    try {
      const result = await this.options.run(place, source.token);
      if (this.disposed || generation !== this.generation || source.isCancelled) return;
      this.shownKey = place.sectionKey;
      this.options.onResults(place, result);
    } catch (err) {
      if (this.disposed || generation !== this.generation || source.isCancelled || isCancellation(err)) return;
      this.shownKey = undefined;
      this.options.onError?.(place, err);
    } finally {
      if (this.inFlight === flight) this.inFlight = undefined;
      source.dispose();
      if (!this.disposed && !this.inFlight) this.options.onBusy?.(false);
    }
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private cancelInFlight(): void {
    if (this.inFlight) {
      this.inFlight.source.cancel();
      this.inFlight = undefined;
    }
  }

  dispose(): void {
    this.disposed = true;
    this.clearTimer();
    this.cancelInFlight();
  }
}
