// Copies the kbls server wheel of the extension's own version into server/, so the VSIX carries
// the server it installs on request (src/serverInstall.ts). The wheel comes from <repo>/dist/; it
// is built there first when it is missing or older than the server's sources. The server's
// version (server/kbls/__init__.py) must equal the extension's (package.json): one release, one
// version.
//
// The build needs nothing but a Python 3.10+ with venv: `pip wheel` of a clean copy of the
// sources (pip fetches setuptools from the package index into its own build environment), run by
// $KBLS_PYTHON, else <repo>/.venv/bin/python (`make venv`), else a private virtual environment
// this script makes with python3 in vscode-extension/.cache/wheel-venv. Not the PyPA `build`
// module, which a system Python does not have and PEP 668 systems refuse to `pip install`; not the
// system pip, which Debian ships apart from python3 while venv brings its own. The copy keeps
// setuptools' build/ folder and egg-info out of the clone, and modules deleted since an earlier
// build out of the wheel.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ext = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(ext, "..");
const windows = process.platform === "win32";

/** Stops the packaging with a message that says what to do. */
function fail(message) {
  console.error(`bundle-wheel: ${message}`);
  process.exit(1);
}

const { version } = JSON.parse(readFileSync(join(ext, "package.json"), "utf8"));
const init = readFileSync(join(repo, "server", "kbls", "__init__.py"), "utf8");
const serverVersion = /__version__\s*=\s*["']([^"']+)["']/.exec(init)?.[1];
if (serverVersion !== version) {
  fail(`the server is version ${serverVersion} (server/kbls/__init__.py) but the extension is ${version} (package.json); they must match.`);
}

const name = `kbls-${version}-py3-none-any.whl`;
const dist = join(repo, "dist");
const built = join(dist, name);

/** The newest modification time under a folder (the server's sources and packaging). */
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "__pycache__") continue;
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const venvPython = (venv) => join(venv, windows ? "Scripts/python.exe" : "bin/python");

/** Runs `python args`; its exit status and output, or the spawn error (ENOENT: not found). */
function probe(python, args) {
  const r = spawnSync(python, args, { encoding: "utf8", timeout: 120000 });
  return { ok: r.status === 0, output: `${r.stdout ?? ""}${r.stderr ?? ""}`, error: r.error };
}

/** The Python 3.10+ that runs pip: the one named, the clone's dev venv, or a private venv. */
function buildPython() {
  if (process.env.KBLS_PYTHON) {
    const python = process.env.KBLS_PYTHON;
    if (!probe(python, ["-m", "pip", "--version"]).ok) fail(`KBLS_PYTHON=${python} cannot run pip (\`${python} -m pip --version\` failed). Point it to a Python 3.10+ that has pip, or unset it.`);
    return python;
  }
  const devVenv = venvPython(join(repo, ".venv"));
  if (existsSync(devVenv) && probe(devVenv, ["-m", "pip", "--version"]).ok) return devVenv;

  const venv = join(ext, ".cache", "wheel-venv");
  const own = venvPython(venv);
  if (existsSync(own) && probe(own, ["-m", "pip", "--version"]).ok) return own;

  const python3 = windows ? "python" : "python3";
  const found = probe(python3, ["-c", "import sys; print('%d.%d' % sys.version_info[:2]); sys.exit(sys.version_info < (3, 10))"]);
  if (found.error?.code === "ENOENT") {
    fail(`${python3} was not found on PATH. The VSIX carries the kbls server as a wheel, which needs Python 3.10 or newer to build: install it (python.org, or your system's packages, e.g. \`sudo apt install python3 python3-venv\`), or set KBLS_PYTHON to one.`);
  }
  if (!found.ok) fail(`${python3} is Python ${found.output.trim() || "(unknown)"}; building the kbls wheel needs 3.10 or newer. Install a newer one, or set KBLS_PYTHON to it.`);
  console.log(`bundle-wheel: making a private build environment with ${python3} (Python ${found.output.trim()}) in ${relative(repo, venv)}`);
  rmSync(venv, { recursive: true, force: true });
  const made = probe(python3, ["-m", "venv", venv]);
  if (!made.ok) {
    rmSync(venv, { recursive: true, force: true });
    const debian = /ensurepip|python3(\.\d+)?-venv/.test(made.output)
      ? ` This Python has no venv module with pip: on Debian or Ubuntu, \`sudo apt install python3-venv\` (or python3.${found.output.trim().split(".")[1]}-venv).`
      : "";
    fail(`\`${python3} -m venv ${venv}\` failed.${debian} Or set KBLS_PYTHON to a Python 3.10+ that has pip.\n${made.output.trim()}`);
  }
  return own;
}

if (!existsSync(built) || statSync(built).mtimeMs < Math.max(newest(join(repo, "server", "kbls")), statSync(join(repo, "pyproject.toml")).mtimeMs)) {
  const python = buildPython();
  const source = mkdtempSync(join(tmpdir(), "kbls-wheel-"));
  try {
    for (const file of ["pyproject.toml", "README.md", "LICENSE"]) copyFileSync(join(repo, file), join(source, file));
    const skipped = new Set(["__pycache__", "build"]);
    cpSync(join(repo, "server"), join(source, "server"), {
      recursive: true,
      filter: (path) => !skipped.has(path.split(/[\\/]/).pop()) && !path.endsWith(".egg-info") && !path.endsWith(".pyc"),
    });
    console.log(`bundle-wheel: building ${name} with ${relative(repo, python) || python} -m pip wheel (pip fetches setuptools from your package index)`);
    mkdirSync(dist, { recursive: true });
    rmSync(built, { force: true });
    try {
      execFileSync(
        python,
        ["-m", "pip", "wheel", "--no-deps", "--no-input", "--disable-pip-version-check", "--progress-bar", "off", "--wheel-dir", dist, source],
        { stdio: "inherit", timeout: 600000, env: { ...process.env, PIP_NO_INPUT: "1" } },
      );
    } catch (err) {
      fail(`building the wheel failed (${err.status != null ? `exit ${err.status}` : err.message}); pip's messages are above. It needs setuptools>=77 from your package index: behind a proxy or offline, configure pip for your index (pip config, PIP_INDEX_URL).`);
    }
  } finally {
    rmSync(source, { recursive: true, force: true });
  }
}
if (!existsSync(built)) fail(`${built} is missing after the build`);
const target = join(ext, "server");
rmSync(target, { recursive: true, force: true });
mkdirSync(target, { recursive: true });
copyFileSync(built, join(target, name));
console.log(`bundle-wheel: server/${name} (${Math.round(statSync(built).size / 1024)} kB)`);
