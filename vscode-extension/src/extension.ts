// kbls for VS Code: starts `kbls serve` for the workspace and contributes the KB: commands,
// the index status-bar item and (through the language client) hovers in markdown.
import * as vscode from "vscode";
import { KbClient } from "./client";
import { Commands, registerCommands } from "./commands";
import { StatusBar } from "./statusBar";

let kbClient: KbClient | undefined;

const RESTART_KEYS = ["kbls.serverPath", "kbls.pythonPath", "kbls.extraArgs", "kbls.initializationOptions"];

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const statusBar = new StatusBar(Commands.showStatus);
  kbClient = new KbClient(statusBar);
  context.subscriptions.push(statusBar, kbClient);
  registerCommands(context, kbClient);
  // A change to how the server is started restarts it; typing a path in the Settings editor
  // fires one event per edit, so the restart waits for the edits to settle.
  let restartTimer: ReturnType<typeof setTimeout> | undefined;
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (RESTART_KEYS.some((k) => e.affectsConfiguration(k))) {
        if (restartTimer) clearTimeout(restartTimer);
        restartTimer = setTimeout(() => {
          restartTimer = undefined;
          void kbClient?.restart();
        }, 500);
      }
    }),
    { dispose: () => restartTimer && clearTimeout(restartTimer) },
  );
  void kbClient.start();
}

export async function deactivate(): Promise<void> {
  await kbClient?.stop();
  kbClient = undefined;
}
