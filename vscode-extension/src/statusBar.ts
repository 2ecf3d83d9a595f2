// The status-bar item: indexing progress (from `$/progress` and `kb/indexStatus`), then the number
// of notes indexed. Clicking it runs KB: Show Status. The text comes from `statusModel.ts`.
import * as vscode from "vscode";
import type { IndexStatusNotification, StatusResult } from "./protocol";
import {
  applyIndexStatus,
  applyProgress,
  applyStatusResult,
  emptySnapshot,
  renderStatus,
  type ProgressState,
  type ServerPhase,
  type StatusSnapshot,
} from "./statusModel";

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private snapshot: StatusSnapshot = emptySnapshot();

  constructor(command: string) {
    this.item = vscode.window.createStatusBarItem("kbls.status", vscode.StatusBarAlignment.Left, 10);
    this.item.name = "kbls index";
    this.item.command = command;
    this.render();
    // Shown once the service starts: a folder kbls is not enabled for shows nothing.
  }

  hide(): void {
    this.item.hide();
  }

  setPhase(phase: ServerPhase, detail?: string): void {
    this.item.show();
    this.snapshot.phase = phase;
    this.snapshot.detail = detail;
    if (phase !== "running") this.snapshot.progress.clear();
    this.render();
  }

  reset(): void {
    this.snapshot = emptySnapshot();
    this.render();
  }

  progress(token: string, value: { kind: string } & ProgressState): void {
    applyProgress(this.snapshot, token, value);
    this.render();
  }

  indexStatus(n: IndexStatusNotification): void {
    applyIndexStatus(this.snapshot, n);
    this.render();
  }

  /** True while a `$/progress` operation is open (the client then checks kb/status now and then). */
  get inProgress(): boolean {
    return this.snapshot.progress.size > 0;
  }

  statusResult(r: StatusResult): void {
    applyStatusResult(this.snapshot, r);
    this.render();
  }

  private render(): void {
    const view = renderStatus(this.snapshot);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.warning ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
