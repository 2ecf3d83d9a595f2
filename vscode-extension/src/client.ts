// Owns the LanguageClient: finds the server (or installs it on request), starts it for the
// workspace folders kbls is enabled for (one server serves them all; the server follows
// workspace/didChangeWorkspaceFolders), checks its version, restarts it, and forwards index
// progress to the status bar.
import * as vscode from "vscode";
import {
  LanguageClient,
  State,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
  type InitializeParams,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
} from "vscode-languageclient/node";
import * as kb from "./protocol";
import { findPython, isNoPython, probeVersion, venvPython } from "./pythonFinder";
import {
  adviseVersion,
  bundledWheelPath,
  InstallError,
  installServer,
  managedVenv,
  nodeInstallDeps,
  nodeRunner,
  parseServerVersion,
  versionMessage,
} from "./serverInstall";
import { isNotFound, locateServer, nodeDeps, type NotFound, type ServerCommand } from "./serverLocator";
import type { StatusBar } from "./statusBar";
import { pythonExtensionInterpreter } from "./pythonExtension";
import { parseIndexStatus } from "./wireParse";

export const OUTPUT_NAME = "kbls";
export const INSTALL_CHOICE = "Install kbls server";
export const UPGRADE_CHOICE = "Upgrade kbls server";
const STATUS_POLL_MS = 5000;

/** Where the extension lives and keeps its own server environment. */
export interface ExtensionPlace {
  extensionPath: string;
  /** `context.globalStorageUri.fsPath`. */
  storageDir: string;
  /** The extension's version: the server it installs is the same. */
  version: string;
}

export class KbClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private clientDisposables: vscode.Disposable[] = [];
  private starting: Promise<LanguageClient | undefined> | undefined;
  private installing: Promise<boolean> | undefined;
  private stopping = false;
  private versionChecked = false;
  /** The command line of the running server (KB: Show Status shows it). */
  command: ServerCommand | undefined;
  notFound: NotFound | undefined;
  private readonly indexChanged = new vscode.EventEmitter<kb.IndexStatusNotification>();
  /** Fires on every `kb/indexStatus` (the search picker re-runs its query once the index is ready). */
  readonly onDidChangeIndex = this.indexChanged.event;

  constructor(
    private readonly statusBar: StatusBar,
    readonly output: vscode.LogOutputChannel,
    private readonly place: ExtensionPlace,
    /** The workspace folders kbls may index (optInGate.ts). */
    private readonly folderEnabled: (folder: vscode.Uri) => boolean,
  ) {}

  /** The running client, starting it first if needed; undefined when no server could start. */
  async ready(): Promise<LanguageClient | undefined> {
    if (this.client && this.client.state === State.Running) return this.client;
    // Not found stays not found until a setting changes, the server is installed or KB: Restart Server looks again.
    if (this.notFound) return undefined;
    if (this.starting) return this.starting;
    return this.start();
  }

  get running(): LanguageClient | undefined {
    return this.client && this.client.state === State.Running ? this.client : undefined;
  }

  /** True once started (running, starting, or failed and waiting for a restart). */
  get active(): boolean {
    return this.client !== undefined || this.starting !== undefined || this.notFound !== undefined;
  }

  start(): Promise<LanguageClient | undefined> {
    if (!this.starting) {
      this.starting = this.doStart().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  private enabledFolders(): vscode.WorkspaceFolder[] {
    return (vscode.workspace.workspaceFolders ?? []).filter((f) => this.folderEnabled(f.uri));
  }

  private async doStart(): Promise<LanguageClient | undefined> {
    this.statusBar.setPhase("starting");
    const folder = this.enabledFolders()[0];
    const config = vscode.workspace.getConfiguration("kbls", folder?.uri);
    const located = await locateServer(
      {
        serverPath: config.get<string>("serverPath", ""),
        pythonPath: config.get<string>("pythonPath", ""),
        extraArgs: config.get<string[]>("extraArgs", []),
        managedVenv: managedVenv(this.place.storageDir),
      },
      nodeDeps({ workspaceFolder: folder?.uri.fsPath, pythonExtensionInterpreter: () => pythonExtensionInterpreter(folder?.uri) }),
    );
    if (isNotFound(located)) {
      this.notFound = located;
      this.command = undefined;
      this.output.warn(`Server not found. Tried: ${located.tried.join("; ")}`);
      this.statusBar.setPhase("notFound", located.error);
      void this.showNotFound(located);
      return undefined;
    }
    this.notFound = undefined;
    this.command = located;
    this.output.info(`Starting: ${located.display} (found via ${located.source})`);

    const run = {
      command: located.command,
      args: located.args,
      options: { cwd: folder?.uri.fsPath, env: { ...process.env } },
    };
    // Debugging the extension (F5) also turns the server's log up.
    const serverOptions: ServerOptions = { run, debug: { ...run, args: [...run.args, "--log-level", "debug"] } };
    const enabled = (uri: string): boolean => this.folderEnabled(vscode.Uri.parse(uri));
    const inEnabled = (uri: vscode.Uri): boolean => {
      const f = vscode.workspace.getWorkspaceFolder(uri);
      return f !== undefined && this.folderEnabled(f.uri);
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file", language: "markdown" }],
      outputChannel: this.output,
      initializationOptions: config.get<object>("initializationOptions", {}),
      markdown: { isTrusted: false, supportHtml: false },
      // Only the notes of enabled folders go to the server and get its hovers.
      middleware: {
        didOpen: (document, next) => (inEnabled(document.uri) ? next(document) : Promise.resolve()),
        didChange: (event, next) => (inEnabled(event.document.uri) ? next(event) : Promise.resolve()),
        didSave: (document, next) => (inEnabled(document.uri) ? next(document) : Promise.resolve()),
        didClose: (document, next) => (inEnabled(document.uri) ? next(document) : Promise.resolve()),
        provideHover: (document, position, token, next) =>
          inEnabled(document.uri) && vscode.workspace.getConfiguration("kbls", document.uri).get<boolean>("hover.enabled", true)
            ? next(document, position, token)
            : undefined,
        // Link completion, definition and document links: the client registers them from the
        // server's capabilities; a note outside the enabled folders is not asked about.
        provideCompletionItem: (document, position, context, token, next) =>
          inEnabled(document.uri) ? next(document, position, context, token) : undefined,
        provideDefinition: (document, position, token, next) => (inEnabled(document.uri) ? next(document, position, token) : undefined),
        provideDocumentLinks: (document, token, next) => (inEnabled(document.uri) ? next(document, token) : undefined),
        workspace: {
          // The server indexes the folders it is told about: only the enabled ones.
          workspaceFolders: async (token, next) => {
            const folders = await next(token);
            return Array.isArray(folders) ? folders.filter((f) => enabled(f.uri)) : folders;
          },
          didChangeWorkspaceFolders: (event, next) =>
            next({
              added: event.added.filter((f) => this.folderEnabled(f.uri)),
              removed: event.removed.filter((f) => this.folderEnabled(f.uri)),
            }),
        },
      },
    };
    // Asked beside the start, not after it: a server too old to start still gets its upgrade offer.
    void this.checkVersion(located);
    const client = new LanguageClient("kbls", "kbls", serverOptions, clientOptions);
    client.registerFeature(new EnabledFoldersOnly(enabled));
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
      this.output.error(`The server failed to start: ${String(err)}`);
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
    // The server's kb/status is the authority on whether indexing is over: while a progress is
    // open, ask it every few seconds, so a lost `end` (a reconnecting client) cannot leave the
    // status bar at "indexing" for good.
    const poll = setInterval(() => {
      if (this.statusBar.inProgress && this.running === client) void this.refreshStatus();
    }, STATUS_POLL_MS);
    this.clientDisposables.push(
      { dispose: () => clearInterval(poll) },
      client.onNotification(kb.Methods.indexStatus, (raw: unknown) => {
        let n: kb.IndexStatusNotification;
        try {
          n = parseIndexStatus(raw);
        } catch (err) {
          this.output.error(`${kb.Methods.indexStatus}: ${String(err)}`);
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
      this.output.error(`kb/status failed: ${String(err)}`);
      return undefined;
    }
  }

  /** Once per session: a server of another version than the extension is offered an upgrade. */
  private async checkVersion(server: ServerCommand): Promise<void> {
    if (this.versionChecked) return;
    this.versionChecked = true;
    const answer = await nodeRunner(server.command, [...server.prefix, "--version"], { timeoutMs: 30000 });
    const version = parseServerVersion(answer.output);
    const advice = adviseVersion(version, this.place.version, server.source === "managed");
    this.output.info(`Server version: ${version ?? "unknown"} (extension ${this.place.version})`);
    const message = versionMessage(advice);
    if (!message) return;
    if (advice.kind === "upgradeManaged") {
      const choice = await vscode.window.showInformationMessage(message, UPGRADE_CHOICE);
      if (choice === UPGRADE_CHOICE) await this.install();
    } else {
      this.output.warn(message);
      void vscode.window.showWarningMessage(message);
    }
  }

  async showNotFound(nf: NotFound): Promise<void> {
    const choices = [INSTALL_CHOICE, "Open Setting", "Show Output"];
    const choice = await vscode.window.showErrorMessage(nf.error, ...choices);
    if (choice === INSTALL_CHOICE) await this.install();
    else if (choice === "Open Setting") await openSetting(nf.setting);
    else if (choice === "Show Output") this.output.show();
  }

  /** KB: Install Server, the not-found button and the upgrade offer: installs, then (re)starts. */
  install(): Promise<boolean> {
    if (!this.installing) {
      this.installing = this.doInstall().finally(() => {
        this.installing = undefined;
      });
    }
    return this.installing;
  }

  private async doInstall(): Promise<boolean> {
    const folder = this.enabledFolders()[0] ?? vscode.workspace.workspaceFolders?.[0];
    // An upgrade reuses the environment's own interpreter; a first install looks for one.
    const own = venvPython(managedVenv(this.place.storageDir), process.platform);
    const ownVersion = await probeVersion(own, []);
    const python = ownVersion
      ? { command: own, args: [], label: "the extension's environment", version: ownVersion }
      : await findPython({ ...nodeDeps(), probeVersion }, await pythonExtensionInterpreter(folder?.uri).catch(() => undefined));
    if (isNoPython(python)) {
      this.output.error(python.error);
      void vscode.window.showErrorMessage(python.error, "Show Output").then((c) => c && this.output.show());
      return false;
    }
    this.output.info(`Installing the kbls server ${this.place.version} with ${python.label}: ${python.command} (Python ${python.version})`);
    const phaseBefore = this.notFound ? "notFound" : undefined;
    this.statusBar.setPhase("installing");
    try {
      const installed = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "kbls", cancellable: true },
        (progress, token) =>
          installServer(
            {
              storageDir: this.place.storageDir,
              python,
              wheel: bundledWheelPath(this.place.extensionPath, this.place.version),
              version: this.place.version,
              onOutput: (line) => this.output.trace(line),
            },
            nodeInstallDeps(),
            (message, increment) => {
              progress.report({ message, increment });
              this.statusBar.setPhase("installing", message);
              this.output.info(message);
            },
            () => token.isCancellationRequested,
          ),
      );
      this.output.info(`Installed: ${installed.kbls} ${installed.version}${installed.upgraded ? " (upgraded)" : ""}`);
      void vscode.window.showInformationMessage(`kbls: the server ${installed.version} is installed.`);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.output.error(`Installing the server failed: ${message}`);
      if (err instanceof InstallError && err.output) this.output.error(err.output);
      void vscode.window.showErrorMessage(`kbls: ${message}`, "Show Output").then((c) => c && this.output.show());
      if (phaseBefore) this.statusBar.setPhase(phaseBefore, this.notFound?.error);
      else if (this.running) this.statusBar.setPhase("running");
      else this.statusBar.hide();
      return false;
    }
    this.versionChecked = false;
    if (this.active || this.enabledFolders().length > 0) await this.restart();
    return true;
  }

  async stop(): Promise<void> {
    // A client still starting cannot be stopped (vscode-languageclient rejects, unhandled): let
    // the start settle first, for a few seconds at most.
    if (this.starting) await Promise.race([this.starting.catch(() => undefined), new Promise((r) => setTimeout(r, 5000))]);
    const client = this.client;
    this.client = undefined;
    for (const d of this.clientDisposables.splice(0)) d.dispose();
    if (!client) return;
    this.stopping = true;
    try {
      if (client.state !== State.Stopped) await client.stop(5000);
    } catch (err) {
      this.output.warn(`Stopping the server: ${String(err)}`);
    } finally {
      this.stopping = false;
    }
    this.statusBar.setPhase("stopped");
  }

  async restart(): Promise<LanguageClient | undefined> {
    this.output.info("Restarting the server");
    if (this.starting) await this.starting.catch(() => undefined);
    await this.stop();
    this.notFound = undefined;
    this.statusBar.reset();
    return this.start();
  }

  /** Stops the server and hides the status bar item (no folder is enabled any more). */
  async shutdown(): Promise<void> {
    await this.stop();
    this.notFound = undefined;
    this.statusBar.hide();
  }

  dispose(): void {
    void this.stop();
    this.indexChanged.dispose();
  }
}

/**
 * Opens the Settings editor on a setting. In a remote window (code-server, SSH, WSL, containers)
 * the machine-overridable settings (the server's paths) are not listed in the User tab: open the
 * Remote tab instead, where they apply to the machine the server runs on.
 */
function openSetting(setting: string): Thenable<unknown> {
  return vscode.env.remoteName
    ? vscode.commands.executeCommand("workbench.action.openRemoteSettings", { query: setting })
    : vscode.commands.executeCommand("workbench.action.openSettings", setting);
}

/**
 * Runs last among the client's features: the initialize request names only the enabled folders
 * (the client's own folder feature lists every folder of the workspace).
 */
class EnabledFoldersOnly implements StaticFeature {
  constructor(private readonly enabled: (uri: string) => boolean) {}

  fillInitializeParams(params: InitializeParams): void {
    const folders = (params.workspaceFolders ?? []).filter((f) => this.enabled(f.uri));
    params.workspaceFolders = folders;
    if (folders.length > 0) {
      params.rootUri = folders[0].uri;
      params.rootPath = vscode.Uri.parse(folders[0].uri).fsPath;
    }
  }

  fillClientCapabilities(): void {}

  initialize(): void {}

  getState(): { kind: "static" } {
    return { kind: "static" };
  }

  clear(): void {}
}
