// kbls for VS Code: contributes the KB: commands and, for the workspace folders kbls is enabled
// for (a `.kbls.yaml`, or the user said yes once: optInGate.ts), starts `kbls serve`, the index
// status-bar item and (through the language client) hovers in markdown.
import * as vscode from "vscode";
import { registerBacklinks } from "./backlinks";
import { KbClient } from "./client";
import { Commands, registerCommands } from "./commands";
import { FolderGate } from "./optInGate";
import { pythonExtensionApi } from "./pythonExtension";
import { StatusBar } from "./statusBar";

let kbClient: KbClient | undefined;

const RESTART_KEYS = ["kbls.serverPath", "kbls.pythonPath", "kbls.extraArgs", "kbls.initializationOptions"];

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("kbls", { log: true });
  const statusBar = new StatusBar(Commands.showStatus);
  const gate = new FolderGate(context.globalState, output);
  const client = new KbClient(
    statusBar,
    output,
    {
      extensionPath: context.extensionPath,
      storageDir: context.globalStorageUri.fsPath,
      version: String((context.extension?.packageJSON as { version?: unknown } | undefined)?.version ?? "0.0.0"),
    },
    (folder) => gate.isEnabled(folder),
  );
  kbClient = client;
  context.subscriptions.push(output, statusBar, gate, client);
  registerCommands(context, client, gate);
  registerBacklinks(context, client);

  // The service follows the enabled folders: start with the first, restart when the set changes
  // (the server is told which folders to index at start), stop when none is left.
  const followGate = async (): Promise<void> => {
    void vscode.commands.executeCommand("setContext", "kbls.enabled", gate.anyEnabled);
    if (!gate.anyEnabled) await client.shutdown();
    else if (client.active) await client.restart();
    else await client.start();
  };
  context.subscriptions.push(gate.onDidChange(() => void followGate()));

  // A change to how the server is started restarts it; typing a path in the Settings editor
  // fires one event per edit, so the restart waits for the edits to settle.
  let restartTimer: ReturnType<typeof setTimeout> | undefined;
  const restartSoon = (): void => {
    if (!gate.anyEnabled) return;
    if (restartTimer) clearTimeout(restartTimer);
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      void client.restart();
    }, 500);
  };
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (RESTART_KEYS.some((k) => e.affectsConfiguration(k))) restartSoon();
    }),
    { dispose: () => restartTimer && clearTimeout(restartTimer) },
  );
  // The Python extension's interpreter is one place the server comes from: when the user picks
  // another environment, look again (as the python-tools extension template does).
  void pythonExtensionApi()
    .then((api) => {
      const changed = api?.environments?.onDidChangeActiveEnvironmentPath;
      if (!changed) return;
      context.subscriptions.push(
        changed(() => {
          if (client.command?.source === "pythonExtension" || client.notFound) {
            output.info("The Python extension's environment changed: restarting the server");
            restartSoon();
          }
        }),
      );
    })
    .catch((err) => output.warn(`The Python extension's API: ${String(err)}`));

  await gate.initialize();
  if (gate.anyEnabled && !client.active) void followGate();
}

export async function deactivate(): Promise<void> {
  await kbClient?.stop();
  kbClient = undefined;
}
