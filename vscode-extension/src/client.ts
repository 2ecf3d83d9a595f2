// Owns the LanguageClient: finds the server (or has it installed on request), starts it for the
// workspace folders kbls is enabled for (one server serves them all; the server follows
// workspace/didChangeWorkspaceFolders), checks its version, restarts it, and forwards index
// progress to the status bar. What the client sends is clientOptions.ts; talking the user
// through installs and upgrades is serverSetup.ts.
import * as vscode from "vscode";
import { LanguageClient, State, WorkDoneProgress, WorkDoneProgressCreateRequest } from "vscode-languageclient/node";
import { clientOptions, EnabledFoldersOnly, serverOptions } from "./clientOptions";
import * as kb from "./protocol";
import { pythonExtensionInterpreter } from "./pythonExtension";
import { managedVenv } from "./serverInstall";
import { isNotFound, locateServer, nodeDeps, type NotFound, type ServerCommand } from "./serverLocator";
import { bundledWheel, installChosen, installWithProgress, upgradeChosen, type ExtensionPlace, type SetupUi } from "./serverSetup";
import type { StatusBar } from "./statusBar";
import { withUsersStore } from "./userStore";
import { parseIndexStatus } from "./wireParse";

export { INSTALL_CHOICE, UPGRADE_CHOICE, type ExtensionPlace } from "./serverSetup";
export const OUTPUT_NAME = "kbls";
const STATUS_POLL_MS = 5000;

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

  private get setupUi(): SetupUi {
    return { output: this.output, statusBar: this.statusBar, place: this.place };
  }

  private enabledFolders(): vscode.WorkspaceFolder[] {
    return (vscode.workspace.workspaceFolders ?? []).filter((f) => this.folderEnabled(f.uri));
  }

  /** The settings' initializationOptions, with a team store from the user's own settings only. */
  private initializationOptions(config: vscode.WorkspaceConfiguration): object {
    const chosen = withUsersStore(
      config.get<object>("initializationOptions", {}),
      config.inspect<object>("initializationOptions")?.globalValue,
    );
    if (chosen.ignored !== undefined) {
      this.output.warn(
        `kbls.initializationOptions.store from this workspace's settings is ignored (${String(chosen.ignored)}): ` +
          "a team store is chosen in your user settings (docs/team.md)",
      );
    }
    return chosen.options;
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
        bundledWheel: await bundledWheel(this.place),
      },
      nodeDeps({ workspaceFolder: folder?.uri.fsPath, pythonExtensionInterpreter: () => pythonExtensionInterpreter(folder?.uri) }),
    );
    if (isNotFound(located)) {
      this.notFound = located;
      this.command = undefined;
      const tried = `Tried: ${located.tried.join("; ")}`;
      if (located.kind === "missing") this.output.info(`No kbls server installed yet. ${tried}`);
      else this.output.warn(`Server not found: ${located.message} ${tried}`);
      this.statusBar.setPhase("notFound", located.message);
      void this.showNotFound(located);
      return undefined;
    }
    this.notFound = undefined;
    this.command = located;
    this.output.info(`Starting: ${located.display} (found via ${located.source})`);
    // Asked beside the start, not after it: a server too old to start still gets its upgrade offer.
    void this.checkVersion(located);
    const client = new LanguageClient(
      "kbls",
      "kbls",
      serverOptions(located, folder?.uri.fsPath),
      clientOptions(this.output, this.initializationOptions(config), this.folderEnabled),
    );
    client.registerFeature(new EnabledFoldersOnly(this.folderEnabled));
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
    if (await upgradeChosen(this.setupUi, server)) await this.install();
  }

  /** The not-found message; its Install button installs the server and starts it. */
  async showNotFound(nf: NotFound): Promise<void> {
    if (await installChosen(this.output, nf)) await this.install();
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
    const notFoundBefore = this.notFound !== undefined;
    const installed = await installWithProgress(this.setupUi, folder, () => {
      if (notFoundBefore) this.statusBar.setPhase("notFound", this.notFound?.message);
      else if (this.running) this.statusBar.setPhase("running");
      else this.statusBar.hide();
    });
    if (!installed) return false;
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
