// The Python extension (ms-python.python), when it is installed: the interpreter it has selected
// (one place the server can come from, and the Python the install uses first) and the event it
// fires when the user selects another environment. Both generations of its API are read.
import * as vscode from "vscode";

type PythonEnvironments = {
  getActiveEnvironmentPath?(r?: vscode.Uri): { path: string } | undefined;
  resolveEnvironment?(p: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
};

/** The Python extension's environments API (either generation), when it is installed. */
export async function pythonExtensionApi(): Promise<{ environments?: PythonEnvironments; settings?: unknown } | undefined> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext) return undefined;
  const api = (ext.isActive ? ext.exports : await ext.activate()) as unknown;
  if (typeof api !== "object" || api === null) return undefined;
  return api as { environments?: PythonEnvironments; settings?: unknown };
}

/** The interpreter the Python extension has selected, through either of its API generations. */
export async function pythonExtensionInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const api = await pythonExtensionApi();
  if (!api) return undefined;
  const environments = api.environments;
  if (environments?.getActiveEnvironmentPath) {
    const active = environments.getActiveEnvironmentPath(resource);
    if (active && environments.resolveEnvironment) {
      const resolved = await environments.resolveEnvironment(active);
      const fsPath = resolved?.executable?.uri?.fsPath;
      if (fsPath) return fsPath;
    }
    if (active?.path) return active.path;
  }
  const settings = api.settings as { getExecutionDetails?(r?: vscode.Uri): { execCommand?: string[] } } | undefined;
  const exec = settings?.getExecutionDetails?.(resource)?.execCommand;
  return exec && exec.length > 0 ? exec[0] : undefined;
}
