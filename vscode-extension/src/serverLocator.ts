// Finds how to start `kbls serve`: the `kbls.serverPath` setting, else `kbls` on PATH, else a
// Python that has the package (`kbls.pythonPath`, else the Python extension's interpreter), else
// the environment the extension installed the server into (serverInstall.ts).
// No `vscode` import: the extension passes the settings in, the tests pass fakes.
import { execFile } from "node:child_process";
import { promises as fs, constants as fsConstants } from "node:fs";
import * as path from "node:path";

export type ServerSource = "serverPath" | "path" | "pythonPath" | "pythonExtension" | "managed";

export interface ServerCommand {
  command: string;
  args: string[];
  source: ServerSource;
  /** The arguments before `serve` (`-c LAUNCHER` for a Python): `kbls --version` runs with them. */
  prefix: string[];
  /** The exact command line, for the log. */
  display: string;
}

export interface NotFound {
  /**
   * "missing": nothing configured and no server anywhere, a new user's first start (an offer to
   * install, not an error). "misconfigured": a setting names a server or Python that does not
   * work, which the install would not change.
   */
  kind: "missing" | "misconfigured";
  /** What to tell the user. */
  message: string;
  /** What was tried, in order, for the log. */
  tried: string[];
  /** The setting to open from the message. */
  setting: "kbls.serverPath" | "kbls.pythonPath";
}

export interface LocatorSettings {
  serverPath?: string;
  pythonPath?: string;
  extraArgs?: readonly string[];
  /** The virtual environment the extension installs the server into (in its global storage). */
  managedVenv?: string;
  /** The server wheel the VSIX carries, when it is there: what the install-it-yourself hint names. */
  bundledWheel?: string;
}

export interface LocatorDeps {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** Expands `${workspaceFolder}` and `~` in settings. */
  workspaceFolder?: string;
  homedir?: string;
  isExecutable(file: string): Promise<boolean>;
  /** True when `python -c "import kbls"` succeeds. */
  pythonHasKbls(python: string): Promise<boolean>;
  /** The Python extension's active interpreter, when that extension is installed. */
  pythonExtensionInterpreter?(): Promise<string | undefined>;
}

export function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function displayCommand(command: string, args: readonly string[]): string {
  return [command, ...args].map(quoteArg).join(" ");
}

export function expandPath(value: string, deps: Pick<LocatorDeps, "workspaceFolder" | "homedir" | "env">): string {
  let v = value.trim();
  if (deps.workspaceFolder) v = v.split("${workspaceFolder}").join(deps.workspaceFolder);
  const home = deps.homedir ?? deps.env.HOME;
  if (home && (v === "~" || v.startsWith("~/"))) v = home + v.slice(1);
  if (deps.workspaceFolder && v && !path.isAbsolute(v) && (v.includes("/") || v.includes("\\"))) {
    v = path.resolve(deps.workspaceFolder, v);
  }
  return v;
}

/** Looks a bare command name up on PATH the way a shell would. */
export async function whichOnPath(
  name: string,
  deps: Pick<LocatorDeps, "env" | "platform" | "isExecutable">,
): Promise<string | undefined> {
  const pathVar = deps.env.PATH ?? deps.env.Path ?? "";
  const sep = deps.platform === "win32" ? ";" : ":";
  const exts = deps.platform === "win32" ? (deps.env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";") : [""];
  for (const dir of pathVar.split(sep)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext.toLowerCase());
      if (await deps.isExecutable(candidate)) return candidate;
      if (ext && (await deps.isExecutable(path.join(dir, name + ext)))) return path.join(dir, name + ext);
    }
  }
  return undefined;
}

function scriptNextToPython(python: string, platform: NodeJS.Platform): string {
  const dir = path.dirname(python);
  return platform === "win32" ? path.join(dir, "kbls.exe") : path.join(dir, "kbls");
}

/**
 * Runs the package's console-script entry point, so it works whether or not the package has a
 * `__main__` module: `python -c LAUNCHER serve ...` (argv[1:] is then `serve ...`).
 */
export const PYTHON_LAUNCHER = "import sys; from kbls.cli import main; sys.exit(main())";

/**
 * Where to install the server from by hand, as a tool that puts `kbls` on PATH. kbls is not on
 * the package index yet: the wheel the VSIX carries (the extension's own version), else a clone.
 */
export function selfInstallSource(bundledWheel: string | undefined): string {
  if (!bundledWheel) return "from a clone of kbls, `uv tool install ./` (or `pipx install ./`) in the clone";
  const wheel = quoteArg(bundledWheel);
  return `from the wheel this extension carries, \`uv tool install ${wheel}\` (or \`pipx install ${wheel}\`)`;
}

/** The first start's message: no server yet, and the ways to get one. */
export function missingMessage(bundledWheel: string | undefined): string {
  return (
    "kbls needs its language server, which is not installed yet. Install kbls server sets it up in the extension's " +
    `own environment with your Python (3.10 or newer). Or install it yourself ${selfInstallSource(bundledWheel)}, ` +
    "then run KB: Restart Server; for a `kbls` elsewhere, set `kbls.serverPath`."
  );
}

export async function locateServer(settings: LocatorSettings, deps: LocatorDeps): Promise<ServerCommand | NotFound> {
  const extra = [...(settings.extraArgs ?? [])];
  const tried: string[] = [];
  const make = (command: string, pre: string[], source: ServerSource): ServerCommand => {
    const args = [...pre, "serve", ...extra];
    return { command, args, source, prefix: pre, display: displayCommand(command, args) };
  };

  // 1. An explicit path wins; if it is wrong, say so rather than silently using another kbls.
  const serverPath = settings.serverPath?.trim() ? expandPath(settings.serverPath, deps) : "";
  if (serverPath) {
    const resolved = path.isAbsolute(serverPath) ? serverPath : await whichOnPath(serverPath, deps);
    if (resolved && (await deps.isExecutable(resolved))) return make(resolved, [], "serverPath");
    return {
      kind: "misconfigured",
      message: `kbls.serverPath is set to "${settings.serverPath}", which is not an executable file. Fix the setting or clear it to look kbls up on PATH.`,
      tried: [`kbls.serverPath: ${serverPath}`],
      setting: "kbls.serverPath",
    };
  }

  // 2. `kbls` on PATH.
  tried.push("`kbls` on PATH");
  const onPath = await whichOnPath("kbls", deps);
  if (onPath) return make(onPath, [], "path");

  // 3. A Python with the package: the setting, else the Python extension's interpreter.
  const pythons: { python: string; source: ServerSource }[] = [];
  if (settings.pythonPath?.trim()) {
    pythons.push({ python: expandPath(settings.pythonPath, deps), source: "pythonPath" });
  } else if (deps.pythonExtensionInterpreter) {
    try {
      const p = await deps.pythonExtensionInterpreter();
      if (p) pythons.push({ python: p, source: "pythonExtension" });
    } catch {
      // The Python extension is optional; its failure only means one fewer place to look.
    }
  }
  for (const { python, source } of pythons) {
    const label = source === "pythonPath" ? "kbls.pythonPath" : "the Python extension's interpreter";
    tried.push(`${label}: ${python}`);
    const resolved = path.isAbsolute(python) ? python : await whichOnPath(python, deps);
    if (!resolved || !(await deps.isExecutable(resolved))) continue;
    // A virtual environment's own `kbls` script sits next to its python.
    const script = scriptNextToPython(resolved, deps.platform);
    if (await deps.isExecutable(script)) return make(script, [], source);
    if (await deps.pythonHasKbls(resolved)) return make(resolved, ["-c", PYTHON_LAUNCHER], source);
  }

  // 4. The environment the extension installed the server into.
  // An explicit kbls.pythonPath without the package is reported, not silently replaced.
  if (settings.managedVenv && !settings.pythonPath?.trim()) {
    const script = scriptNextToPython(path.join(settings.managedVenv, deps.platform === "win32" ? "Scripts" : "bin", "python"), deps.platform);
    tried.push(`the extension's own environment: ${settings.managedVenv}`);
    if (await deps.isExecutable(script)) return make(script, [], "managed");
  }

  const pythonPath = settings.pythonPath?.trim();
  if (pythonPath) {
    const python = quoteArg(expandPath(pythonPath, deps));
    const how = settings.bundledWheel
      ? `\`${python} -m pip install ${quoteArg(settings.bundledWheel)}\``
      : `\`${python} -m pip install ./\` in a clone of kbls`;
    return {
      kind: "misconfigured",
      message:
        `kbls.pythonPath is set to "${settings.pythonPath}", which is not a Python with the kbls package (looked for ${tried.join(", ")}). ` +
        `Install the server into that Python (${how}), or clear the setting to use the server the extension installs.`,
      tried,
      setting: "kbls.pythonPath",
    };
  }
  return { kind: "missing", message: missingMessage(settings.bundledWheel), tried, setting: "kbls.serverPath" };
}

export function isNotFound(r: ServerCommand | NotFound): r is NotFound {
  return (r as NotFound).kind !== undefined;
}

/** The real file-system and process checks. */
export function nodeDeps(extra: Partial<LocatorDeps> = {}): LocatorDeps {
  return {
    env: process.env,
    platform: process.platform,
    async isExecutable(file: string): Promise<boolean> {
      try {
        const st = await fs.stat(file);
        if (!st.isFile()) return false;
        if (process.platform === "win32") return true;
        await fs.access(file, fsConstants.X_OK);
        return true;
      } catch {
        return false;
      }
    },
    pythonHasKbls(python: string): Promise<boolean> {
      return new Promise((resolve) => {
        execFile(python, ["-c", "import kbls.cli"], { timeout: 15000 }, (err) => resolve(!err));
      });
    },
    ...extra,
  };
}
