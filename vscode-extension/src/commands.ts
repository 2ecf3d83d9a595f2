// The KB: commands. Each is a thin wrapper over the client and the pickers.
import * as path from "node:path";
import * as vscode from "vscode";
import { BACKLINKS_COMMAND } from "./backlinks";
import type { KbClient } from "./client";
import type { FolderGate } from "./optInGate";
import { showFixedPicker, showRelatedPicker, showSearchPicker } from "./pickerUi";
import * as kb from "./protocol";
import { selectionQuery } from "./relatedItems";
import { registerRelatedView, ViewCommands } from "./relatedView";
import { formatStatusMarkdown } from "./statusModel";

export const Commands = {
  search: "kbls.search",
  related: "kbls.related",
  reindex: "kbls.reindex",
  showStatus: "kbls.showStatus",
  restartServer: "kbls.restartServer",
  enableFolder: "kbls.enableFolder",
  installServer: "kbls.installServer",
  searchSelection: "kbls.searchSelection",
  notesLikeThis: "kbls.notesLikeThis",
  showBacklinks: BACKLINKS_COMMAND,
  ...ViewCommands,
} as const;

const STATUS_SCHEME = "kbls-status";

/** KB: Show Status renders into a read-only markdown document. */
class StatusDocuments implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  content = "";
  readonly uri = vscode.Uri.from({ scheme: STATUS_SCHEME, path: "/kbls status.md" });

  provideTextDocumentContent(): string {
    return this.content;
  }

  update(content: string): void {
    this.content = content;
    this.changed.fire(this.uri);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

function settings(): { debounceMs: number; limit: number; groupByNote: boolean } {
  const c = vscode.workspace.getConfiguration("kbls");
  return {
    debounceMs: c.get<number>("search.debounceMs", 150),
    limit: c.get<number>("search.limit", 20),
    groupByNote: c.get<boolean>("search.groupByNote", true),
  };
}

/** The folder a folder command is about: the active note's, the only one, or the user's pick. */
async function targetFolder(): Promise<vscode.WorkspaceFolder | undefined> {
  const doc = vscode.window.activeTextEditor?.document;
  const own = doc ? vscode.workspace.getWorkspaceFolder(doc.uri) : undefined;
  if (own) return own;
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length <= 1) return folders[0];
  return vscode.window.showWorkspaceFolderPick({ placeHolder: "The folder whose notes kbls indexes" });
}

/** The selection of the active markdown editor as a query, or undefined (and a word why). */
function selectedQuery(command: string): { query: string; editor: vscode.TextEditor } | undefined {
  const editor = vscode.window.activeTextEditor;
  const query = editor ? selectionQuery(editor.document.getText(editor.selection)) : "";
  if (!editor || !query) {
    void vscode.window.showInformationMessage(`${command} works on text selected in a note.`);
    return undefined;
  }
  return { query, editor };
}

export function registerCommands(context: vscode.ExtensionContext, kbClient: KbClient, gate: FolderGate): void {
  const statusDocs = new StatusDocuments();
  registerRelatedView(context, kbClient, (folder) => gate.isEnabled(folder));
  const sender = async (): Promise<kb.RequestSender | undefined> => kbClient.ready();
  /** Outside an enabled folder, offer to enable it instead of starting anything. */
  const notEnabled = (): boolean => {
    if (gate.anyEnabled) return false;
    void vscode.window
      .showInformationMessage("kbls is not enabled for this folder yet.", "Enable for this folder")
      .then((choice) => choice && vscode.commands.executeCommand(Commands.enableFolder));
    return true;
  };
  /** With no server to ask, say so once instead of opening an empty picker. */
  const serverMissing = (): boolean => {
    if (notEnabled()) return true;
    if (!kbClient.notFound) return false;
    void kbClient.showNotFound(kbClient.notFound);
    return true;
  };

  context.subscriptions.push(
    statusDocs,
    vscode.workspace.registerTextDocumentContentProvider(STATUS_SCHEME, statusDocs),

    vscode.commands.registerCommand(Commands.search, async (initialQuery?: unknown) => {
      if (serverMissing()) return;
      const { debounceMs, limit, groupByNote } = settings();
      await showSearchPicker(sender, {
        debounceMs,
        limit,
        groupByNote,
        initialQuery: typeof initialQuery === "string" ? initialQuery : undefined,
        onDidChangeIndex: kbClient.onDidChangeIndex,
      });
    }),

    vscode.commands.registerCommand(Commands.related, async (arg?: unknown) => {
      if (serverMissing()) return;
      const editor = vscode.window.activeTextEditor;
      const uri = arg instanceof vscode.Uri ? arg : editor?.document.uri;
      if (!uri || uri.scheme !== "file") {
        void vscode.window.showInformationMessage("KB: Related Notes works on a note that is open in the editor.");
        return;
      }
      const sameDoc = editor && editor.document.uri.toString() === uri.toString();
      const position = sameDoc ? editor.selection.active : undefined;
      const label = path.basename(uri.fsPath) + (position ? ` (line ${position.line + 1})` : "");
      await showRelatedPicker(sender, { uri, position, limit: settings().limit, label });
    }),

    vscode.commands.registerCommand(Commands.searchSelection, async () => {
      const selected = selectedQuery("KB: Search Selection");
      if (!selected) return;
      await vscode.commands.executeCommand(Commands.search, selected.query);
    }),

    // The selection's meaning: a semantic search with its text, the note itself left out.
    vscode.commands.registerCommand(Commands.notesLikeThis, async () => {
      if (serverMissing()) return;
      const selected = selectedQuery("KB: Notes Like This");
      if (!selected) return;
      const own = selected.editor.document.uri.toString();
      const { limit } = settings();
      const shown = selected.query.length > 40 ? selected.query.slice(0, 39) + "…" : selected.query;
      await showFixedPicker(sender, {
        title: `KB: Notes Like This — "${shown}"`,
        placeholder: "Notes whose meaning is nearest to the selection — type to filter by title or path",
        empty: "No other note is near the selection's meaning",
        showReasons: false,
        fetch: async (conn, token) => {
          const result = await kb.search(conn, kb.searchParams(selected.query, { limit: limit + 5, mode: "semantic" }), token);
          return { ...result, hits: result.hits.filter((h) => vscode.Uri.parse(h.uri).toString() !== own).slice(0, limit) };
        },
      });
    }),

    vscode.commands.registerCommand(Commands.reindex, async () => {
      if (serverMissing()) return;
      const client = await kbClient.ready();
      if (!client) return;
      try {
        const result = await kb.reindex(client, kb.reindexParams({ force: true }));
        void vscode.window.showInformationMessage(
          `KB: reindexing — ${result.queued} ${result.queued === 1 ? "file" : "files"} queued.`,
        );
      } catch (err) {
        void vscode.window.showErrorMessage(`KB: reindex failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }),

    vscode.commands.registerCommand(Commands.showStatus, async () => {
      if (serverMissing()) return;
      const client = await kbClient.ready();
      if (!client) return;
      const result = await kbClient.refreshStatus();
      if (!result) {
        void vscode.window.showErrorMessage("KB: the server did not answer kb/status. See the kbls output.");
        return;
      }
      statusDocs.update(formatStatusMarkdown(result, { command: kbClient.command?.display }));
      const doc = await vscode.workspace.openTextDocument(statusDocs.uri);
      await vscode.languages.setTextDocumentLanguage(doc, "markdown");
      await vscode.window.showTextDocument(doc, { preview: true });
    }),

    vscode.commands.registerCommand(Commands.enableFolder, async () => {
      const folder = await targetFolder();
      if (!folder) {
        void vscode.window.showInformationMessage("KB: Enable for this folder needs a folder open in the workspace.");
        return;
      }
      try {
        await gate.enableFolder(folder);
      } catch (err) {
        void vscode.window.showErrorMessage(`KB: cannot write .kbls.yaml in ${folder.uri.fsPath}: ${String(err)}`);
      }
    }),

    vscode.commands.registerCommand(Commands.installServer, () => kbClient.install()),

    vscode.commands.registerCommand(Commands.restartServer, async () => {
      if (notEnabled()) return;
      const client = await kbClient.restart();
      if (client) void vscode.window.setStatusBarMessage("KB: server restarted", 3000);
    }),
  );
}
