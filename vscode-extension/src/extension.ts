// kbls for VS Code: starts `kbls serve` for the workspace and contributes the KB: commands,
// the index status-bar item and (through the language client) hovers in markdown.
import * as vscode from "vscode";
import { KbClient } from "./client";
import { Commands, registerCommands } from "./commands";
import { StatusBar } from "./statusBar";

let kbClient: KbClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const statusBar = new StatusBar(Commands.showStatus);
  kbClient = new KbClient(statusBar);
  context.subscriptions.push(statusBar, kbClient);
  registerCommands(context, kbClient);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (["kbls.serverPath", "kbls.pythonPath", "kbls.extraArgs", "kbls.initializationOptions"].some((k) => e.affectsConfiguration(k))) {
        void kbClient?.restart();
      }
    }),
  );
  void kbClient.start();
}

export async function deactivate(): Promise<void> {
  await kbClient?.stop();
  kbClient = undefined;
}
