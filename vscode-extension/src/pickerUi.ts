// The QuickPick for KB: Search and KB: Related Notes. The logic (debounce, cancellation,
// formatting) lives in `searchPicker.ts`; this file only talks to VS Code.
import * as vscode from "vscode";
import { opensAtLines } from "./documentKinds";
import * as kb from "./protocol";
import {
  cursorForRange,
  emptyMessage,
  groupedRows,
  hitsToItems,
  noteKey,
  SearchController,
  searchTitle,
  lacksSectionSnippets,
  sameRow,
  sectionRows,
  shouldRefresh,
  stillExpanded,
  withSectionSnippets,
  type HitItem,
  type PickRow,
} from "./searchPicker";

type Item = vscode.QuickPickItem & { hit?: kb.Hit; range?: kb.Range; expands?: string; expandable?: string };

const openToSide: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon("split-horizontal"),
  tooltip: "Open to the Side",
};

const showSections: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon("unfold"),
  tooltip: "Show the Other Sections",
};

function toItems(items: HitItem[], options: { filterable?: boolean } = {}): Item[] {
  // Search hits always show (the server ranks them); related notes are a fixed list that typing
  // may narrow down.
  return items.map((i) => ({ ...i, alwaysShow: !options.filterable, buttons: [openToSide] }));
}

function rowItems(rows: PickRow[]): Item[] {
  return rows.map((r) => ({
    ...r,
    buttons: r.expands !== undefined ? [] : r.expandable !== undefined ? [showSections, openToSide] : [openToSide],
  }));
}

function placeholderItem(label: string): Item {
  return { label, alwaysShow: true };
}

/**
 * Opens a hit (or `options.range`, one of its note's sections) with the cursor at the start of
 * its first line, nothing selected, that line at the top of the editor. A file VS Code does not
 * open as text (a PDF) is handed to `vscode.open`: no editor comes back.
 */
export async function openHit(
  hit: kb.Hit,
  options: { side?: boolean; preserveFocus?: boolean; range?: kb.Range } = {},
): Promise<vscode.TextEditor | undefined> {
  const uri = vscode.Uri.parse(hit.uri);
  if (!opensAtLines(hit.uri)) {
    const shown: vscode.TextDocumentShowOptions = { viewColumn: options.side ? vscode.ViewColumn.Beside : undefined, preserveFocus: options.preserveFocus ?? false, preview: !options.side };
    await vscode.commands.executeCommand("vscode.open", uri, shown);
    return undefined;
  }
  const doc = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(doc, {
    viewColumn: options.side ? vscode.ViewColumn.Beside : undefined,
    preserveFocus: options.preserveFocus ?? false,
    preview: !options.side,
  });
  const at = cursorForRange(options.range ?? hit.range);
  const cursor = doc.validatePosition(new vscode.Position(at.line, at.character));
  editor.selection = new vscode.Selection(cursor, cursor);
  editor.revealRange(new vscode.Range(cursor, cursor), vscode.TextEditorRevealType.AtTop);
  return editor;
}

interface PickerSetup {
  title: string;
  placeholder: string;
  /** Let VS Code filter the items by what is typed (related notes), instead of the server (search). */
  filterable: boolean;
}

function createPicker(setup: PickerSetup): vscode.QuickPick<Item> {
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = setup.title;
  qp.placeholder = setup.placeholder;
  // Search: the server ranks, so VS Code must not filter the hits by their text.
  qp.matchOnDescription = setup.filterable;
  qp.matchOnDetail = false;
  qp.ignoreFocusOut = false;
  return qp;
}

/** Enter opens the row's note at its range; `expand` handles a "+N more sections" row and the button. */
function wireOpen(qp: vscode.QuickPick<Item>, disposables: vscode.Disposable[], expand?: (key: string) => void): void {
  disposables.push(
    qp.onDidAccept(() => {
      const item = qp.selectedItems[0] ?? qp.activeItems[0];
      const hit = item?.hit;
      if (!item || !hit) return;
      if (item.expands !== undefined && expand) {
        expand(item.expands);
        return;
      }
      qp.hide();
      void openHit(hit, { range: item.range }).catch((err) => vscode.window.showErrorMessage(`kbls: cannot open ${hit.path}: ${String(err)}`));
    }),
    qp.onDidTriggerItemButton((e) => {
      const hit = e.item.hit;
      if (e.button === showSections && e.item.expandable !== undefined && expand) expand(e.item.expandable);
      else if (hit) void openHit(hit, { side: true, preserveFocus: true, range: e.item.range });
    }),
  );
}

export interface SearchPickerOptions {
  initialQuery?: string;
  debounceMs: number;
  limit: number;
  /** One row per note (its best section, the others behind "+N more sections"); false: a row per section. */
  groupByNote: boolean;
  /** `kb/indexStatus` events: answers given while the index was not ready are refreshed once it is. */
  onDidChangeIndex?: vscode.Event<kb.IndexStatusNotification>;
}

/** KB: Search — queries as you type. Resolves when the picker closes. */
export function showSearchPicker(sender: () => Promise<kb.RequestSender | undefined>, options: SearchPickerOptions): Promise<void> {
  const qp = createPicker({
    title: "KB: Search",
    placeholder: "Search notes — tag:NAME, path:GLOB and type:NAME narrow the search",
    filterable: false,
  });
  const disposables: vscode.Disposable[] = [];
  let lastIndexState: string | undefined;
  let shown: kb.Hit[] = [];
  const expanded = new Set<string>();
  const rows = (): Item[] => rowItems(options.groupByNote ? groupedRows(shown, expanded) : sectionRows(shown));
  const ask = async (query: string, token: kb.CancellationTokenLike, sectionSnippets = false): Promise<kb.SearchResult> => {
    const conn = await sender();
    if (!conn) throw new Error("The kbls server is not running.");
    return kb.search(conn, kb.searchParams(query, { limit: options.limit, groupByFile: options.groupByNote, sectionSnippets }), token);
  };
  // The answer leaves the snippets of a note's other sections out (a lexical answer lists many);
  // expanding a note lists its sections at once and asks the same query again for them.
  let filling: vscode.CancellationTokenSource | undefined;
  const stopFilling = (): void => {
    filling?.cancel();
    filling?.dispose();
    filling = undefined;
  };
  const fillSectionSnippets = async (key: string): Promise<void> => {
    const query = controller.shownQuery;
    const note = shown.find((h) => noteKey(h) === key);
    if (query === undefined || !note || !lacksSectionSnippets(note) || filling) return;
    const source = (filling = new vscode.CancellationTokenSource());
    try {
      const result = await ask(query, source.token, true);
      if (source.token.isCancellationRequested || controller.shownQuery !== query) return;
      shown = withSectionSnippets(shown, result.hits);
      showRows(qp.activeItems[0]);
    } catch {
      // the rows stay listed without their snippets
    } finally {
      if (filling === source) stopFilling();
    }
  };
  /** The rows again, the cursor kept on the row it was on when that row is still there. */
  const showRows = (active: Item | undefined): void => {
    const items = rows();
    qp.items = items;
    const same = sameRow(items, active);
    if (same) qp.activeItems = [same];
  };
  let answered: string | undefined;
  const expand = (key: string): void => {
    expanded.add(key);
    const items = rows();
    qp.items = items;
    // the cursor moves onto the note's first other section, where the "+N more" row was
    const note = items.findIndex((i) => i.expandable === key);
    const first = items[note + 1];
    if (first) qp.activeItems = [first];
    void fillSectionSnippets(key);
  };
  const controller = new SearchController<kb.SearchResult>({
    debounceMs: options.debounceMs,
    run: (query, token) => ask(query, token),
    onResults(query, result) {
      stopFilling();
      lastIndexState = result.index?.state;
      qp.title = searchTitle(lastIndexState);
      shown = result.hits;
      // The same query answered again (the index became ready): what was expanded stays so and
      // the cursor stays on its row. A new query starts folded, on its first row.
      const again = query === answered;
      answered = query;
      const kept = again ? stillExpanded(expanded, shown) : new Set<string>();
      expanded.clear();
      for (const key of kept) expanded.add(key);
      if (shown.length === 0) qp.items = [placeholderItem(emptyMessage(query, lastIndexState))];
      else if (again) showRows(qp.activeItems[0]);
      else qp.items = rows();
      for (const key of kept) void fillSectionSnippets(key);
    },
    onCleared() {
      stopFilling();
      answered = undefined;
      shown = [];
      qp.items = [placeholderItem(emptyMessage(""))];
    },
    onError(_query, err) {
      qp.items = [placeholderItem(`Search failed: ${err instanceof Error ? err.message : String(err)}`)];
    },
    onBusy(busy) {
      qp.busy = busy;
    },
  });
  wireOpen(qp, disposables, expand);
  disposables.push(qp.onDidChangeValue((v) => controller.update(v)));
  if (options.onDidChangeIndex) {
    disposables.push(
      options.onDidChangeIndex((n) => {
        if (shouldRefresh(lastIndexState, n.state) && qp.value.trim()) void controller.runNow(qp.value);
      }),
    );
  }

  return new Promise<void>((resolve) => {
    disposables.push(
      qp.onDidHide(() => {
        controller.dispose();
        stopFilling();
        for (const d of disposables) d.dispose();
        qp.dispose();
        resolve();
      }),
    );
    qp.items = [placeholderItem(emptyMessage(""))];
    if (options.initialQuery) {
      qp.value = options.initialQuery;
      void controller.runNow(options.initialQuery);
    }
    qp.show();
  });
}

export interface RelatedPickerOptions {
  uri: vscode.Uri;
  position?: vscode.Position;
  limit: number;
  label: string;
}

/** KB: Related Notes — the same picker, filled once from `kb/related`. */
export function showRelatedPicker(sender: () => Promise<kb.RequestSender | undefined>, options: RelatedPickerOptions): Promise<void> {
  return showFixedPicker(sender, {
    title: `KB: Related Notes — ${options.label}`,
    placeholder: "Notes related to this one, best first — type to filter by title or path",
    empty: "No notes related to this note",
    showReasons: true,
    fetch: (conn, token) => kb.related(conn, kb.relatedParams(options.uri.toString(), options.position, options.limit), token),
  });
}

export interface FixedPickerOptions {
  title: string;
  placeholder: string;
  /** What the picker says when nothing came back (the index state is added). */
  empty: string;
  showReasons: boolean;
  fetch(conn: kb.RequestSender, token: vscode.CancellationToken): Promise<kb.SearchResult>;
}

/** A picker filled once by one request (related notes, notes like a selection); typing filters it. */
export async function showFixedPicker(sender: () => Promise<kb.RequestSender | undefined>, options: FixedPickerOptions): Promise<void> {
  const qp = createPicker({ title: options.title, placeholder: options.placeholder, filterable: true });
  const disposables: vscode.Disposable[] = [];
  const cts = new vscode.CancellationTokenSource();
  wireOpen(qp, disposables);
  const closed = new Promise<void>((resolve) => {
    disposables.push(
      qp.onDidHide(() => {
        cts.cancel();
        for (const d of disposables) d.dispose();
        cts.dispose();
        qp.dispose();
        resolve();
      }),
    );
  });
  qp.busy = true;
  qp.show();
  try {
    const conn = await sender();
    if (!conn) throw new Error("The kbls server is not running.");
    const result = await options.fetch(conn, cts.token);
    const state = result.index?.state;
    const notReady = state === "loading" ? " yet — the model is still loading" : state === "indexing" ? " yet — indexing is in progress" : "";
    qp.items =
      result.hits.length > 0
        ? toItems(hitsToItems(result.hits, { showReasons: options.showReasons }), { filterable: true })
        : [placeholderItem(options.empty + notReady)];
  } catch (err) {
    if (!kb.isCancellation(err)) qp.items = [placeholderItem(`${options.title.replace(/ — .*/, "")} failed: ${err instanceof Error ? err.message : String(err)}`)];
  } finally {
    qp.busy = false;
  }
  return closed;
}
