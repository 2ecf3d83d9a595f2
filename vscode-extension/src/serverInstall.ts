// Installs the kbls server into the extension's own virtual environment (in its global storage):
// `python -m venv`, then `pip install` of the wheel the VSIX carries (the server of the
// extension's own version; its dependencies come from the user's package index), then a check
// that `kbls --version` answers that version. A failed first install removes the half-made
// environment; a failed upgrade leaves the working one in place. Also decides what to say when
// the server's version differs from the extension's. No `vscode` import: the extension passes
// progress and cancellation in, the tests a real Python.
import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { venvPython, venvScript, type FoundPython } from "./pythonFinder";
import { quoteArg, selfInstallSource } from "./serverLocator";

/** The environment's folder inside the extension's global storage. */
export const VENV_DIR = "server-venv";

export function managedVenv(storageDir: string): string {
  return path.join(storageDir, VENV_DIR);
}

/** The wheel the VSIX carries (scripts/bundle-wheel.mjs copies it in at package time). */
export function bundledWheelPath(extensionDir: string, version: string): string {
  return path.join(extensionDir, "server", `kbls-${version}-py3-none-any.whl`);
}

export interface RunResult {
  code: number | null;
  /** stdout and stderr together, the last 64 kB. */
  output: string;
}

export interface RunOptions {
  timeoutMs: number;
  onLine?(line: string): void;
  isCancelled?(): boolean;
}

export type Runner = (command: string, args: readonly string[], options: RunOptions) => Promise<RunResult>;

export interface InstallDeps {
  platform: NodeJS.Platform;
  run: Runner;
  exists(file: string): Promise<boolean>;
  removeDir(dir: string): Promise<void>;
  makeDir(dir: string): Promise<void>;
}

export interface InstallRequest {
  storageDir: string;
  python: FoundPython;
  wheel: string;
  /** The extension's version: the installed server must say the same. */
  version: string;
  /** Every line venv and pip print, for the log. */
  onOutput?(line: string): void;
}

export interface Installed {
  kbls: string;
  version: string;
  /** True when an existing environment was upgraded rather than created. */
  upgraded: boolean;
}

export class InstallError extends Error {
  constructor(
    message: string,
    /** The tail of the failing command's output, for the log. */
    readonly output = "",
  ) {
    super(message);
    this.name = "InstallError";
  }
}

/** Reports a step: the message shown and how much of 100 it adds. */
export type ReportProgress = (message: string, increment?: number) => void;

/** "kbls 0.1.0" → "0.1.0". */
export function parseServerVersion(output: string): string | undefined {
  const m = /\bkbls\s+v?(\d+\.\d+(?:\.\d+)?(?:[-.+]?[A-Za-z0-9.+-]*)?)/.exec(output) ?? /^\s*v?(\d+\.\d+\.\d+\S*)\s*$/m.exec(output);
  return m ? m[1] : undefined;
}

/** pip's lines as progress: each package collected moves the bar a little, installing moves it on. */
export function pipProgress(line: string): { message: string; increment: number } | undefined {
  const collecting = /^\s*Collecting\s+([A-Za-z0-9_.\-[\]]+)/.exec(line);
  if (collecting) return { message: `Downloading ${collecting[1].replace(/\[.*$/, "")}…`, increment: 1.5 };
  if (/^\s*Installing collected packages/.test(line)) return { message: "Installing packages…", increment: 10 };
  if (/^\s*Successfully installed/.test(line)) return { message: "Installed.", increment: 5 };
  return undefined;
}

const tail = (text: string, lines = 25): string => text.trimEnd().split("\n").slice(-lines).join("\n");

export async function installServer(req: InstallRequest, deps: InstallDeps, report: ReportProgress, isCancelled?: () => boolean): Promise<Installed> {
  const venv = managedVenv(req.storageDir);
  const python = venvPython(venv, deps.platform);
  const kbls = venvScript(venv, deps.platform);
  if (!(await deps.exists(req.wheel))) {
    throw new InstallError(
      `The kbls ${req.version} wheel is missing from the extension (${req.wheel}). Reinstall the extension from a VSIX built with \`npm run package\`, or install the server yourself ${selfInstallSource(undefined)}.`,
    );
  }
  const upgrading = await deps.exists(python);
  const check = (r: RunResult, what: string, hint = ""): void => {
    if (isCancelled?.()) throw new InstallError("The kbls server installation was cancelled.");
    if (r.code !== 0) throw new InstallError(`${what} failed (exit ${r.code ?? "killed"}).${hint}`, tail(r.output));
  };
  try {
    if (!upgrading) {
      report(`Creating a Python ${req.python.version} environment…`, 5);
      await deps.makeDir(req.storageDir);
      await deps.removeDir(venv);
      const made = await deps.run(req.python.command, [...req.python.args, "-m", "venv", venv], { timeoutMs: 180000, isCancelled, onLine: req.onOutput });
      check(
        made,
        `Creating a virtual environment with ${req.python.command}`,
        /ensurepip|python3?(\.\d+)?-venv/.test(made.output) ? " This Python has no venv module: on Debian or Ubuntu, install the python3-venv package." : "",
      );
    }
    report(upgrading ? `Upgrading the kbls server to ${req.version}…` : `Installing the kbls server ${req.version} and its dependencies…`, 5);
    let moved = 0;
    const pip = await deps.run(
      python,
      ["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--progress-bar", "off", req.wheel],
      {
        timeoutMs: 20 * 60000,
        isCancelled,
        onLine(line) {
          req.onOutput?.(line);
          const p = pipProgress(line);
          if (!p) return;
          const increment = Math.min(p.increment, Math.max(0, 80 - moved));
          moved += increment;
          report(p.message, increment);
        },
      },
    );
    check(pip, "pip install", " The kbls output has pip's messages (a proxy or an offline machine needs pip configured for your package index).");
    report("Checking the server…", 0);
    const answer = await deps.run(kbls, ["--version"], { timeoutMs: 60000 });
    check(answer, `${kbls} --version`);
    const version = parseServerVersion(answer.output);
    if (version !== req.version) {
      throw new InstallError(`The installed server says version ${version ?? "?"} but the extension is ${req.version}.`, tail(answer.output));
    }
    return { kbls, version, upgraded: upgrading };
  } catch (err) {
    // A first install that failed half-way leaves nothing behind that a later start would try.
    if (!upgrading) await deps.removeDir(venv).catch(() => undefined);
    throw err;
  }
}

export type VersionAdvice =
  | { kind: "same" }
  | { kind: "unknown"; extension: string }
  | { kind: "upgradeManaged"; server: string; extension: string }
  | { kind: "differs"; server: string; extension: string };

/**
 * What to say about the server's version: nothing when it matches; for the extension's own
 * environment an offer to upgrade it from the bundled wheel; for a server the user installed, how
 * to upgrade it themselves.
 */
export function adviseVersion(serverVersion: string | undefined, extensionVersion: string, managed: boolean): VersionAdvice {
  if (!serverVersion) return { kind: "unknown", extension: extensionVersion };
  if (serverVersion === extensionVersion) return { kind: "same" };
  return managed
    ? { kind: "upgradeManaged", server: serverVersion, extension: extensionVersion }
    : { kind: "differs", server: serverVersion, extension: extensionVersion };
}

/** What to say about a version that differs; `bundledWheel` (the wheel the VSIX carries, when there) is the upgrade. */
export function versionMessage(advice: VersionAdvice, bundledWheel?: string): string | undefined {
  switch (advice.kind) {
    case "upgradeManaged":
      return `The kbls server installed by the extension is version ${advice.server}; the extension is ${advice.extension}. Upgrade the server to ${advice.extension}?`;
    case "differs": {
      const how = bundledWheel
        ? `\`uv tool install --reinstall ${quoteArg(bundledWheel)}\` (or \`pipx install --force ${quoteArg(bundledWheel)}\`)`
        : "`uv tool install --reinstall ./` (or `pipx install --force ./`) in a clone of kbls at that version";
      return `The kbls server is version ${advice.server} but the extension is ${advice.extension}. Install the server of version ${advice.extension} over it, ${how}, so both speak the same protocol.`;
    }
    default:
      return undefined;
  }
}

/** Runs a command, streaming its output lines; never rejects (a spawn error is exit code null). */
export const nodeRunner: Runner = (command, args, options) =>
  new Promise((resolve) => {
    let output = "";
    let partial = "";
    const keep = (text: string): void => {
      output = (output + text).slice(-65536);
      if (!options.onLine) return;
      const lines = (partial + text).split(/\r?\n/);
      partial = lines.pop() ?? "";
      for (const line of lines) options.onLine(line);
    };
    const child = spawn(command, [...args], { stdio: ["ignore", "pipe", "pipe"], windowsHide: true, env: { ...process.env, PIP_NO_INPUT: "1" } });
    child.stdout.on("data", (d: Buffer) => keep(d.toString()));
    child.stderr.on("data", (d: Buffer) => keep(d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    const poll = setInterval(() => {
      if (options.isCancelled?.()) child.kill("SIGTERM");
    }, 250);
    let finished = false;
    const done = (code: number | null, extra = ""): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearInterval(poll);
      if (partial && options.onLine) options.onLine(partial);
      resolve({ code, output: output + extra });
    };
    child.on("error", (err) => done(null, `\n${String(err)}`));
    child.on("close", (code) => done(code));
  });

export function nodeInstallDeps(): InstallDeps {
  return {
    platform: process.platform,
    run: nodeRunner,
    async exists(file) {
      try {
        await fs.access(file);
        return true;
      } catch {
        return false;
      }
    },
    removeDir: (dir) => fs.rm(dir, { recursive: true, force: true }),
    makeDir: async (dir) => {
      await fs.mkdir(dir, { recursive: true });
    },
  };
}
