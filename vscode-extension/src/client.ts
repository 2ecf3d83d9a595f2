// Owns the LanguageClient: finds the server, starts it for the workspace (one server serves
// every workspace folder; the server follows workspace/didChangeWorkspaceFolders), restarts it,
// and forwards index progress to the status bar.
import * as vscode from "vscode";
import {
  LanguageClient,
  State,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import * as kb from "./protocol";
import { parseIndexStatus } from "./wireParse";
import { isNotFound, locateServer, nodeDeps, type NotFound, type ServerCommand } from "./serverLocator";
import type { StatusBar } from "./statusBar";

export const OUTPUT_NAME = "kbls";

export class KbClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private clientDisposables: vscode.Disposable[] = [];
  private starting: Promise<LanguageClient | undefined> | undefined;
  private stopping = false;
  /** The command line of the running server (KB: Show Status shows it). */
  command: ServerCommand | undefined;
  notFound: NotFound | undefined;
  readonly output: vscode.OutputChannel;
  private readonly indexChanged = new vscode.EventEmitter<kb.IndexStatusNotification>();
  /** Fires on every `kb/indexStatus` (the search picker re-runs its query once the index is ready). */
  readonly onDidChangeIndex = this.indexChanged.event;

  constructor(private readonly statusBar: StatusBar) {
    this.output = vscode.window.createOutputChannel(OUTPUT_NAME);
  }

  log(message: string): void {
    this.output.appendLine(`[${new Date().toISOString()}] ${message}`);
  }

  /** The running client, starting it first if needed; undefined when no server could start. */
  async ready(): Promise<LanguageClient | undefined> {
    if (this.client && this.client.state === State.Running) return this.client;
    // Not found stays not found until a setting changes or KB: Restart Server looks again.
    if (this.notFound) return undefined;
    if (this.starting) return this.starting;
    return this.start();
  }

  get running(): LanguageClient | undefined {
    return this.client && this.client.state === State.Running ? this.client : undefined;
  }

  start(): Promise<LanguageClient | undefined> {
    if (!this.starting) {
      this.starting = this.doStart().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  private async doStart(): Promise<LanguageClient | undefined> {
    this.statusBar.setPhase("starting");
    const folder = vscode.workspace.workspaceFolders?.[0];
    const config = vscode.workspace.getConfiguration("kbls", folder?.uri);
    const located = await locateServer(
      {
        serverPath: config.get<string>("serverPath", ""),
        pythonPath: config.get<string>("pythonPath", ""),
        extraArgs: config.get<string[]>("extraArgs", []),
      },
      nodeDeps({ workspaceFolder: folder?.uri.fsPath, pythonExtensionInterpreter: () => pythonExtensionInterpreter(folder?.uri) }),
    );
    if (isNotFound(located)) {
      this.notFound = located;
      this.command = undefined;
      this.log(`Server not found. Tried: ${located.tried.join("; ")}`);
      this.statusBar.setPhase("notFound", located.error);
      void this.showNotFound(located);
      return undefined;
    }
    this.notFound = undefined;
    this.command = located;
    this.log(`Starting: ${located.display} (found via ${located.source})`);

    const run = {
      command: located.command,
      args: located.args,
      options: { cwd: folder?.uri.fsPath, env: { ...process.env } },
    };
    // Debugging the extension (F5) also turns the server's log up.
    const serverOptions: ServerOptions = { run, debug: { ...run, args: [...run.args, "--log-level", "debug"] } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file", language: "markdown" }],
      outputChannel: this.output,
      initializationOptions: config.get<object>("initializationOptions", {}),
      markdown: { isTrusted: false, supportHtml: false },
    };
    const client = new LanguageClient("kbls", "kbls", serverOptions, clientOptions);
    this.client = client;
    this.clientDisposables.push(
      client.onDidChangeState((e) => {
        if (e.newState === State.Running) this.statusBar.setPhase("running");
        else if (e.newState === State.Stopped && client === this.client) {
          this.statusBar.setPhase(this.stopping ? "stopped" : "failed", "The kbls server stopped. See the kbls output.");
        }
      }),
    );
    try {
      await client.start();
    } catch (err) {
      this.log(`The server failed to start: ${String(err)}`);
      this.statusBar.setPhase("failed", `The kbls server failed to start: ${String(err)}`);
      void vscode.window
        .showErrorMessage(`kbls: the server failed to start (${located.display}). See the kbls output.`, "Show Output")
        .then((choice) => choice && this.output.show());
      return undefined;
    }
    this.attach(client);
    this.statusBar.setPhase("running");
    void this.refreshStatus();
    return client;
  }

  private attach(client: LanguageClient): void {
    this.clientDisposables.push(
      client.onNotification(kb.Methods.indexStatus, (raw: unknown) => {
        let n: kb.IndexStatusNotification;
        try {
          n = parseIndexStatus(raw);
        } catch (err) {
          this.log(`${kb.Methods.indexStatus}: ${String(err)}`);
          return;
        }
        this.statusBar.indexStatus(n);
        this.indexChanged.fire(n);
        if (n.state === "ready") void this.refreshStatus();
      }),
      // Progress the server reports (model load, initial scan, reindex) drives the status bar.
      client.onRequest(WorkDoneProgressCreateRequest.type, (params) => {
        const token = String(params.token);
        const sub = client.onProgress(WorkDoneProgress.type, params.token, (value) => {
          this.statusBar.progress(token, value);
          if (value.kind === "end") {
            sub.dispose();
            void this.refreshStatus();
          }
        });
        this.clientDisposables.push(sub);
        return null;
      }),
    );
  }

  /** Asks `kb/status` for the note count the status bar shows once indexing is over. */
  async refreshStatus(): Promise<kb.StatusResult | undefined> {
    const client = this.running;
    if (!client) return undefined;
    try {
      const result = await kb.status(client);
      this.statusBar.statusResult(result);
      return result;
    } catch (err) {
      this.log(`kb/status failed: ${String(err)}`);
      return undefined;
    }
  }

  async showNotFound(nf: NotFound): Promise<void> {
    const choice = await vscode.window.showErrorMessage(nf.error, "Open Setting", "Show Output");
    if (choice === "Open Setting") await vscode.commands.executeCommand("workbench.action.openSettings", nf.setting);
    else if (choice === "Show Output") this.output.show();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    for (const d of this.clientDisposables.splice(0)) d.dispose();
    if (!client) return;
    this.stopping = true;
    try {
      if (client.state !== State.Stopped) await client.stop(5000);
    } catch (err) {
      this.log(`Stopping the server: ${String(err)}`);
    } finally {
      this.stopping = false;
    }
    this.statusBar.setPhase("stopped");
  }

  async restart(): Promise<LanguageClient | undefined> {
    this.log("Restarting the server");
    if (this.starting) await this.starting.catch(() => undefined);
    await this.stop();
    this.statusBar.reset();
    return this.start();
  }

  dispose(): void {
    void this.stop();
    this.indexChanged.dispose();
    this.output.dispose();
  }
}

/** The interpreter the Python extension has selected, through either of its API generations. */
async function pythonExtensionInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext) return undefined;
  const api = (ext.isActive ? ext.exports : await ext.activate()) as unknown;
  if (typeof api !== "object" || api === null) return undefined;
  const environments = (api as { environments?: unknown }).environments as
    | {
        getActiveEnvironmentPath?(r?: vscode.Uri): { path: string } | undefined;
        resolveEnvironment?(p: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
      }
    | undefined;
  if (environments?.getActiveEnvironmentPath) {
    const active = environments.getActiveEnvironmentPath(resource);
    if (active && environments.resolveEnvironment) {
      const resolved = await environments.resolveEnvironment(active);
      const fsPath = resolved?.executable?.uri?.fsPath;
      if (fsPath) return fsPath;
    }
    if (active?.path) return active.path;
  }
  const settings = (api as { settings?: unknown }).settings as
    | { getExecutionDetails?(r?: vscode.Uri): { execCommand?: string[] } }
    | undefined;
  const exec = settings?.getExecutionDetails?.(resource)?.execCommand;
  return exec && exec.length > 0 ? exec[0] : undefined;
}
