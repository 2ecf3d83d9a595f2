// Finds a Python that can host the extension's own kbls environment: the Python extension's
// interpreter, else `python3` / `python` on PATH (`py -3` on Windows), the first that is 3.10 or
// newer. When none is, the message lists what was found and its version. No `vscode` import.
import { execFile } from "node:child_process";
import * as path from "node:path";
import { whichOnPath, type LocatorDeps } from "./serverLocator";

/** The oldest Python the server supports (pyproject.toml `requires-python`). */
export const MIN_PYTHON: readonly [number, number] = [3, 10];

export interface PythonCommand {
  command: string;
  /** Arguments before any of ours (`-3` for the Windows `py` launcher). */
  args: string[];
  /** Where it came from, for messages: "the Python extension's interpreter", "python3 on PATH". */
  label: string;
}

export interface FoundPython extends PythonCommand {
  version: string;
}

export interface NoPython {
  error: string;
  /** Every candidate and what it answered ("3.8.18", "did not run"). */
  tried: string[];
}

export interface PythonDeps extends Pick<LocatorDeps, "env" | "platform" | "isExecutable"> {
  /** `sys.version_info[:3]` of a command as "3.11.7", or undefined when it does not run. */
  probeVersion(command: string, args: readonly string[]): Promise<string | undefined>;
}

export function isSupported(version: string): boolean {
  const [major, minor] = version.split(".").map(Number);
  if (!Number.isInteger(major) || !Number.isInteger(minor)) return false;
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

export function isNoPython(r: FoundPython | NoPython): r is NoPython {
  return (r as NoPython).error !== undefined;
}

/** The candidates, in order: the Python extension's choice first, then PATH. */
export async function pythonCandidates(deps: PythonDeps, extensionInterpreter?: string): Promise<PythonCommand[]> {
  const out: PythonCommand[] = [];
  if (extensionInterpreter) {
    out.push({ command: extensionInterpreter, args: [], label: "the Python extension's interpreter" });
  }
  const names = deps.platform === "win32" ? ["py", "python3", "python"] : ["python3", "python"];
  for (const name of names) {
    const found = await whichOnPath(name, deps);
    if (!found || out.some((c) => c.command === found)) continue;
    out.push({ command: found, args: name === "py" ? ["-3"] : [], label: `${name} on PATH` });
  }
  return out;
}

export async function findPython(deps: PythonDeps, extensionInterpreter?: string): Promise<FoundPython | NoPython> {
  const tried: string[] = [];
  for (const candidate of await pythonCandidates(deps, extensionInterpreter)) {
    const version = await deps.probeVersion(candidate.command, candidate.args);
    tried.push(`${candidate.label} (${candidate.command}): ${version ?? "did not run"}`);
    if (version && isSupported(version)) return { ...candidate, version };
  }
  const need = `Python ${MIN_PYTHON.join(".")} or newer`;
  const error =
    tried.length === 0
      ? `kbls needs ${need} to install its server, and none was found (no Python extension interpreter, no python3 or python on PATH). Install Python from python.org or your package manager, then run KB: Install Server.`
      : `kbls needs ${need} to install its server. Found: ${tried.join("; ")}. Install a newer Python or select one in the Python extension, then run KB: Install Server.`;
  return { error, tried };
}

const PROBE = "import sys; print('%d.%d.%d' % sys.version_info[:3])";

/** Runs the interpreter for its version (10 s bound). */
export function probeVersion(command: string, args: readonly string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, [...args, "-c", PROBE], { timeout: 10000, windowsHide: true }, (err, stdout) => {
      const m = /^(\d+\.\d+\.\d+)\s*$/.exec(String(stdout));
      resolve(err || !m ? undefined : m[1]);
    });
  });
}

/** The interpreter inside a virtual environment. */
export function venvPython(venv: string, platform: NodeJS.Platform): string {
  return platform === "win32" ? path.join(venv, "Scripts", "python.exe") : path.join(venv, "bin", "python");
}

/** The `kbls` console script inside a virtual environment. */
export function venvScript(venv: string, platform: NodeJS.Platform, name = "kbls"): string {
  return platform === "win32" ? path.join(venv, "Scripts", `${name}.exe`) : path.join(venv, "bin", name);
}
