// The server's setup as the user meets it: the not-found error and its buttons, the upgrade offer
// when the server's version differs from the extension's, and the install itself (a Python found,
// the bundled wheel installed into the extension's own environment, with progress). KbClient
// (client.ts) decides when; these functions talk to the user and report back.
import { promises as fs } from "node:fs";
import * as vscode from "vscode";
import { findPython, isNoPython, probeVersion, venvPython } from "./pythonFinder";
import { pythonExtensionInterpreter } from "./pythonExtension";
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
import { nodeDeps, type NotFound, type ServerCommand } from "./serverLocator";
import type { StatusBar } from "./statusBar";

export const INSTALL_CHOICE = "Install kbls server";
export const UPGRADE_CHOICE = "Upgrade kbls server";

/** Where the extension lives and keeps its own server environment. */
export interface ExtensionPlace {
  extensionPath: string;
  /** `context.globalStorageUri.fsPath`. */
  storageDir: string;
  /** The extension's version: the server it installs is the same. */
  version: string;
}

/** Where the setup reports: the kbls output and the status bar; and the extension's place. */
export interface SetupUi {
  readonly output: vscode.LogOutputChannel;
  readonly statusBar: StatusBar;
  readonly place: ExtensionPlace;
}

/** The wheel the VSIX carries, when it is there (an extension run from its sources has none). */
export async function bundledWheel(place: ExtensionPlace): Promise<string | undefined> {
  const wheel = bundledWheelPath(place.extensionPath, place.version);
  return fs.access(wheel).then(
    () => wheel,
    () => undefined,
  );
}

/** Asks the server its version; true when it is the extension's own, outdated, and the user chose to upgrade it. */
export async function upgradeChosen(ui: SetupUi, server: ServerCommand): Promise<boolean> {
  const answer = await nodeRunner(server.command, [...server.prefix, "--version"], { timeoutMs: 30000 });
  const version = parseServerVersion(answer.output);
  const advice = adviseVersion(version, ui.place.version, server.source === "managed");
  ui.output.info(`Server version: ${version ?? "unknown"} (extension ${ui.place.version})`);
  const message = versionMessage(advice, await bundledWheel(ui.place));
  if (!message) return false;
  if (advice.kind === "upgradeManaged") return (await vscode.window.showInformationMessage(message, UPGRADE_CHOICE)) === UPGRADE_CHOICE;
  ui.output.warn(message);
  void vscode.window.showWarningMessage(message);
  return false;
}

/**
 * Says the server was not found; true when the user chose to install it. No server at all is a new
 * user's first start: an information prompt with the install first. A setting that names a server
 * or Python that does not work is an error, which the install would not fix.
 */
export async function installChosen(output: vscode.LogOutputChannel, nf: NotFound): Promise<boolean> {
  const choice =
    nf.kind === "missing"
      ? await vscode.window.showInformationMessage(nf.message, INSTALL_CHOICE, "Open Setting", "Show Output")
      : await vscode.window.showErrorMessage(nf.message, "Open Setting", "Show Output");
  if (choice === "Open Setting") await openSetting(nf.setting);
  else if (choice === "Show Output") output.show();
  return choice === INSTALL_CHOICE;
}

/**
 * Installs the server of the extension's version into its own environment, with a cancellable
 * progress notification. False when no Python was found or the install failed: the user was told,
 * and `restorePhase` has put the status bar back.
 */
export async function installWithProgress(ui: SetupUi, folder: vscode.WorkspaceFolder | undefined, restorePhase: () => void): Promise<boolean> {
  const { output, statusBar, place } = ui;
  // An upgrade reuses the environment's own interpreter; a first install looks for one.
  const own = venvPython(managedVenv(place.storageDir), process.platform);
  const ownVersion = await probeVersion(own, []);
  const python = ownVersion
    ? { command: own, args: [], label: "the extension's environment", version: ownVersion }
    : await findPython({ ...nodeDeps(), probeVersion }, await pythonExtensionInterpreter(folder?.uri).catch(() => undefined));
  if (isNoPython(python)) {
    output.error(python.error);
    void vscode.window.showErrorMessage(python.error, "Show Output").then((c) => c && output.show());
    return false;
  }
  output.info(`Installing the kbls server ${place.version} with ${python.label}: ${python.command} (Python ${python.version})`);
  statusBar.setPhase("installing");
  try {
    const installed = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "kbls", cancellable: true },
      (progress, token) =>
        installServer(
          {
            storageDir: place.storageDir,
            python,
            wheel: bundledWheelPath(place.extensionPath, place.version),
            version: place.version,
            onOutput: (line) => output.trace(line),
          },
          nodeInstallDeps(),
          (message, increment) => {
            progress.report({ message, increment });
            statusBar.setPhase("installing", message);
            output.info(message);
          },
          () => token.isCancellationRequested,
        ),
    );
    output.info(`Installed: ${installed.kbls} ${installed.version}${installed.upgraded ? " (upgraded)" : ""}`);
    void vscode.window.showInformationMessage(`kbls: the server ${installed.version} is installed.`);
    return true;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    output.error(`Installing the server failed: ${message}`);
    if (err instanceof InstallError && err.output) output.error(err.output);
    void vscode.window.showErrorMessage(`kbls: ${message}`, "Show Output").then((c) => c && output.show());
    restorePhase();
    return false;
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
