// Opt-in indexing in VS Code: the service starts only for a workspace folder that has a
// `.kbls.yaml` or whose user said yes. On the first markdown note of any other folder the user is
// asked once (optIn.ts decides, this file asks), and KB: Enable for this folder writes a minimal
// `.kbls.yaml`. A `.kbls.yaml` created later (by hand or by git) enables its folder too.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { Choices, CONFIG_FILE, isNoteDocument, MINIMAL_CONFIG, OptIn, QUESTION, type Choice } from "./optIn";

export class FolderGate implements vscode.Disposable {
  private readonly optIn: OptIn;
  private readonly enabled = new Set<string>();
  private readonly asking = new Map<string, Promise<void>>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the set of enabled folders changes. */
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    memory: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.optIn = new OptIn(memory, async (folderPath) => {
      try {
        return (await fs.stat(path.join(folderPath, CONFIG_FILE))).isFile();
      } catch {
        return false;
      }
    });
  }

  /** Looks at every folder and every open note; then follows opened notes and new `.kbls.yaml`s. */
  async initialize(): Promise<void> {
    await this.refresh();
    const watcher = vscode.workspace.createFileSystemWatcher(`**/${CONFIG_FILE}`, false, true, true);
    this.disposables.push(
      watcher,
      watcher.onDidCreate(() => void this.refresh()),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.refresh()),
      vscode.workspace.onDidOpenTextDocument((doc) => void this.consider(doc)),
    );
    for (const doc of vscode.workspace.textDocuments) await this.consider(doc);
  }

  get anyEnabled(): boolean {
    return this.enabled.size > 0;
  }

  isEnabled(folder: vscode.Uri): boolean {
    return this.enabled.has(folder.toString());
  }

  /** Re-reads the state of every folder; fires onDidChange when the enabled set changed. */
  async refresh(): Promise<void> {
    const before = [...this.enabled].sort().join("\n");
    this.enabled.clear();
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      if ((await this.optIn.state(key(folder))) === "enabled") this.enabled.add(folder.uri.toString());
    }
    if ([...this.enabled].sort().join("\n") !== before) {
      this.log.info(`kbls is enabled for: ${[...this.enabled].join(", ") || "no folder"}`);
      this.changed.fire();
    }
  }

  /** Asks once per folder when a markdown note of a folder that is not enabled opens. */
  private async consider(doc: vscode.TextDocument): Promise<void> {
    if (!isNoteDocument(doc)) return;
    const folder = vscode.workspace.getWorkspaceFolder(doc.uri);
    if (!folder || this.isEnabled(folder.uri)) return;
    const id = folder.uri.toString();
    const pending = this.asking.get(id);
    if (pending) return pending;
    const ask = this.ask(folder).finally(() => this.asking.delete(id));
    this.asking.set(id, ask);
    return ask;
  }

  private async ask(folder: vscode.WorkspaceFolder): Promise<void> {
    if ((await this.optIn.state(key(folder))) !== "ask") return;
    const label = (vscode.workspace.workspaceFolders?.length ?? 0) > 1 ? ` (${folder.name})` : "";
    const choice = await vscode.window.showInformationMessage<Choice>(`${QUESTION}${label}`, Choices.yes, Choices.notNow, Choices.never);
    this.log.info(`${QUESTION} ${folder.uri.fsPath}: ${choice ?? "dismissed"}`);
    if (await this.optIn.record(folder.uri.toString(), choice)) await this.refresh();
  }

  /** KB: Enable for this folder: writes a minimal `.kbls.yaml` (never over an existing one). */
  async enableFolder(folder: vscode.WorkspaceFolder): Promise<void> {
    const file = path.join(folder.uri.fsPath, CONFIG_FILE);
    try {
      await fs.writeFile(file, MINIMAL_CONFIG, { flag: "wx" });
      this.log.info(`Wrote ${file}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    await this.optIn.enable(folder.uri.toString());
    await this.refresh();
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    this.changed.dispose();
  }
}

function key(folder: vscode.WorkspaceFolder): { uri: string; path: string } {
  return { uri: folder.uri.toString(), path: folder.uri.fsPath };
}
