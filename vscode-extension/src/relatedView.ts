// The Related Notes view in the Explorer: the notes related to the section under the cursor of
// the active markdown note (`kb/related` with the position), asked again when the cursor settles
// in another section (relatedFollow.ts decides when), each row with its title, why it is related
// and its score. A click opens the note at the related section; "Insert link here" writes a link
// to it at the cursor of the last markdown note the user was in. Below them, a "Backlinks (N
// notes)" group lists the links from other notes to this one (`kb/backlinks`, once per note).
import * as vscode from "vscode";
import { backlinkRow, backlinksOf } from "./backlinks";
import type { KbClient } from "./client";
import { openHit } from "./pickerUi";
import * as kb from "./protocol";
import { headingLines, RelatedFollower, sectionStart, type CursorPlace } from "./relatedFollow";
import { chooseLinkStyle, linkText, relatedRows, type RelatedRow } from "./relatedItems";
import { basename } from "./searchPicker";

export const RELATED_VIEW_ID = "kbls.relatedNotes";
export const ROW_CONTEXT = "kbls.relatedNote";

export const ViewCommands = {
  open: "kbls.openRelatedNote",
  insertLink: "kbls.insertRelatedLink",
  refresh: "kbls.refreshRelatedNotes",
} as const;

/** The "Backlinks" group at the end of the view: the links from other notes to the shown note. */
interface BacklinksGroup {
  uri: string;
  notes: number;
  rows: RelatedRow[];
}
type ViewRow = RelatedRow | BacklinksGroup;
const isGroup = (row: ViewRow): row is BacklinksGroup => "rows" in row;

function isNote(doc: vscode.TextDocument): boolean {
  return doc.languageId === "markdown" && doc.uri.scheme === "file";
}

/** The heading lines of one document version: asked on every cursor move, computed once per edit. */
class HeadingCache {
  private key = "";
  private lines: number[] = [];

  of(doc: vscode.TextDocument): number[] {
    const key = `${doc.uri.toString()}@${doc.version}`;
    if (key !== this.key) {
      this.lines = headingLines(doc.lineCount, (i) => doc.lineAt(i).text);
      this.key = key;
    }
    return this.lines;
  }
}

export class RelatedNotesView implements vscode.TreeDataProvider<ViewRow>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<ViewRow>;
  private readonly follower: RelatedFollower<kb.SearchResult>;
  private readonly headings = new HeadingCache();
  private readonly disposables: vscode.Disposable[] = [];
  private rows: RelatedRow[] = [];
  /** The shown note's backlinks (undefined: not asked yet, or asked again once the index changes). */
  private backlinks: BacklinksGroup | undefined;
  private place: CursorPlace | undefined;
  private shownState: string | undefined;
  /** The markdown note "Insert link here" writes into: the last one the user was in. */
  private lastNote: vscode.Uri | undefined;

  constructor(
    private readonly kbClient: KbClient,
    private readonly folderEnabled: (folder: vscode.Uri) => boolean,
  ) {
    this.follower = new RelatedFollower<kb.SearchResult>({
      debounceMs: this.debounceMs(),
      run: async (place, token) => {
        const conn = await this.kbClient.ready();
        if (!conn) throw new Error("the kbls server is not running");
        const limit = vscode.workspace.getConfiguration("kbls").get<number>("search.limit", 20);
        return kb.related(conn, kb.relatedParams(place.uri, place.position, limit), token);
      },
      onResults: (place, result) => this.show(place, result),
      onError: (_place, err) => {
        this.rows = [];
        this.changed.fire();
        this.view.message = `Related notes failed: ${err instanceof Error ? err.message : String(err)}`;
      },
    });
    this.view = vscode.window.createTreeView(RELATED_VIEW_ID, { treeDataProvider: this, showCollapseAll: false });
    this.view.message = "Open a markdown note: the notes related to the section under the cursor show here.";
    this.disposables.push(
      this.view,
      this.changed,
      { dispose: () => this.follower.dispose() },
      vscode.window.onDidChangeTextEditorSelection((e) => this.follow(e.textEditor)),
      vscode.window.onDidChangeActiveTextEditor((editor) => editor && this.follow(editor)),
      this.view.onDidChangeVisibility((e) => {
        if (e.visible) this.follow(vscode.window.activeTextEditor);
      }),
      // Once the index is ready again (a saved note was re-indexed, the model finished loading),
      // the answer on screen may be out of date: ask again.
      this.kbClient.onDidChangeIndex((n) => {
        if (n.state === "ready") this.backlinks = undefined;
        if (n.state === "ready" && this.place && this.view.visible) void this.follower.refresh(this.place);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("kbls.related.debounceMs")) this.follower.setDebounce(this.debounceMs());
      }),
    );
    this.follow(vscode.window.activeTextEditor);
  }

  private debounceMs(): number {
    return vscode.workspace.getConfiguration("kbls").get<number>("related.debounceMs", 300);
  }

  /** Where the cursor of `editor` is, or undefined when it is not in a note kbls indexes. */
  private placeOf(editor: vscode.TextEditor | undefined): CursorPlace | undefined {
    if (!editor || !isNote(editor.document)) return undefined;
    const folder = vscode.workspace.getWorkspaceFolder(editor.document.uri);
    if (!folder || !this.folderEnabled(folder.uri)) return undefined;
    const pos = editor.selection.active;
    const uri = editor.document.uri.toString();
    const section = sectionStart(this.headings.of(editor.document), pos.line);
    return { uri, position: { line: pos.line, character: pos.character }, sectionKey: `${uri}#${section}` };
  }

  private follow(editor: vscode.TextEditor | undefined): void {
    if (editor && isNote(editor.document)) this.lastNote = editor.document.uri;
    // Another kind of editor (output, settings) leaves the list as it was.
    if (!editor || !isNote(editor.document)) return;
    const place = this.placeOf(editor);
    if (!place) {
      this.follower.reset();
      this.place = undefined;
      this.rows = [];
      this.changed.fire();
      this.view.description = undefined;
      this.view.message = "kbls is not enabled for this note's folder (KB: Enable for this folder).";
      return;
    }
    this.place = place;
    if (!this.view.visible) return;
    this.follower.moved(place);
  }

  private show(place: CursorPlace, result: kb.SearchResult): void {
    this.rows = relatedRows(result.hits);
    this.shownState = result.index?.state;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === place.uri);
    const heading = doc ? sectionStart(this.headings.of(doc), place.position.line) : -1;
    const section = doc && heading >= 0 ? doc.lineAt(heading).text.replace(/^\s*#+\s*/, "").trim() : "";
    this.view.description = basename(vscode.Uri.parse(place.uri).fsPath) + (section ? ` › ${section}` : "");
    if (this.rows.length > 0) this.view.message = undefined;
    else if (this.shownState === "loading" || this.shownState === "indexing")
      this.view.message = `Nothing related yet: the index is ${this.shownState === "loading" ? "loading" : "being built"}.`;
    else this.view.message = "No related notes for this section.";
    this.changed.fire();
    void this.loadBacklinks(place.uri);
  }

  /** Ask for the backlinks of the note at `uri` unless they are shown already; a server that
   * cannot answer leaves the group out. */
  private async loadBacklinks(uri: string): Promise<void> {
    if (this.backlinks?.uri === uri) return;
    this.backlinks = { uri, notes: 0, rows: [] };
    try {
      const conn = await this.kbClient.ready();
      if (!conn) return;
      const result = await backlinksOf(conn, uri);
      if (this.backlinks?.uri !== uri) return;
      this.backlinks = { uri, notes: result.notes, rows: result.backlinks.map(backlinkRow) };
      this.changed.fire();
    } catch {
      // the related notes stay; the group is left out
    }
  }

  getTreeItem(row: ViewRow): vscode.TreeItem {
    if (isGroup(row)) {
      const group = new vscode.TreeItem(
        `Backlinks (${row.notes} ${row.notes === 1 ? "note" : "notes"})`,
        vscode.TreeItemCollapsibleState.Expanded,
      );
      group.iconPath = new vscode.ThemeIcon("references");
      group.tooltip = "The links from other notes to this one";
      return group;
    }
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.iconPath = new vscode.ThemeIcon("note");
    item.contextValue = ROW_CONTEXT;
    item.command = { command: ViewCommands.open, title: "Open", arguments: [row] };
    return item;
  }

  getChildren(row?: ViewRow): ViewRow[] {
    if (row) return isGroup(row) ? row.rows : [];
    const group = this.backlinks && this.backlinks.uri === this.place?.uri && this.backlinks.rows.length > 0 ? [this.backlinks] : [];
    return [...this.rows, ...group];
  }

  /** The view's refresh button: asks again for the cursor's section. */
  refresh(): void {
    const place = this.placeOf(vscode.window.activeTextEditor) ?? this.place;
    if (place) void this.follower.refresh(place);
  }

  /** "Insert link here": a link to the row's note at the cursor of the last markdown note. */
  async insertLink(row: RelatedRow | undefined): Promise<void> {
    if (!row) return;
    const target = this.lastNote;
    if (!target) {
      void vscode.window.showInformationMessage("KB: open the markdown note to insert the link into first.");
      return;
    }
    const editor =
      vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === target.toString()) ??
      (await vscode.window.showTextDocument(target, { preserveFocus: false }));
    const style = chooseLinkStyle(
      vscode.workspace.getConfiguration("kbls", target).get<string>("related.linkStyle", "auto"),
      editor.document.getText(),
    );
    const text = linkText(row.hit, target.toString(), style);
    const at = editor.selection.active;
    const ok = await editor.edit((b) => b.insert(at, text));
    if (!ok) void vscode.window.showErrorMessage("KB: the link could not be inserted (is the note read-only?).");
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

export function registerRelatedView(context: vscode.ExtensionContext, kbClient: KbClient, folderEnabled: (folder: vscode.Uri) => boolean): RelatedNotesView {
  const view = new RelatedNotesView(kbClient, folderEnabled);
  context.subscriptions.push(
    view,
    vscode.commands.registerCommand(ViewCommands.open, async (row?: RelatedRow) => {
      if (!row?.hit) return;
      await openHit(row.hit).catch((err) => vscode.window.showErrorMessage(`kbls: cannot open ${row.hit.path}: ${String(err)}`));
    }),
    vscode.commands.registerCommand(ViewCommands.insertLink, (row?: RelatedRow) => view.insertLink(row)),
    vscode.commands.registerCommand(ViewCommands.refresh, () => view.refresh()),
  );
  return view;
}
