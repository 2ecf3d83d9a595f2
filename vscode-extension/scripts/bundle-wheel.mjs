// Copies the kbls server wheel of the extension's own version into server/, so the VSIX carries
// the server it installs on request (src/serverInstall.ts). The wheel comes from <repo>/dist/
// (`python -m build` at the repository root); it is built there first when it is missing or older
// than the server's sources. The server's version (server/kbls/__init__.py) must equal the
// extension's (package.json): one release, one version.
//
// Python for the build: $KBLS_PYTHON, else <repo>/.venv/bin/python, else python3.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ext = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(ext, "..");
const { version } = JSON.parse(readFileSync(join(ext, "package.json"), "utf8"));
const init = readFileSync(join(repo, "server", "kbls", "__init__.py"), "utf8");
const serverVersion = /__version__\s*=\s*["']([^"']+)["']/.exec(init)?.[1];
if (serverVersion !== version) {
  console.error(`bundle-wheel: the server is version ${serverVersion} (server/kbls/__init__.py) but the extension is ${version} (package.json); they must match.`);
  process.exit(1);
}

const name = `kbls-${version}-py3-none-any.whl`;
const built = join(repo, "dist", name);

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
const sourcesTime = Math.max(newest(join(repo, "server", "kbls")), statSync(join(repo, "pyproject.toml")).mtimeMs);

if (!existsSync(built) || statSync(built).mtimeMs < sourcesTime) {
  const venvPython = join(repo, ".venv", process.platform === "win32" ? "Scripts/python.exe" : "bin/python");
  const python = process.env.KBLS_PYTHON || (existsSync(venvPython) ? venvPython : "python3");
  console.log(`bundle-wheel: building ${name} with ${python} -m build`);
  execFileSync(python, ["-m", "build", "--wheel", "--outdir", join(repo, "dist"), repo], { stdio: "inherit", timeout: 600000 });
}
if (!existsSync(built)) {
  console.error(`bundle-wheel: ${built} is missing after the build`);
  process.exit(1);
}
const target = join(ext, "server");
rmSync(target, { recursive: true, force: true });
mkdirSync(target, { recursive: true });
copyFileSync(built, join(target, name));
console.log(`bundle-wheel: server/${name} (${Math.round(statSync(built).size / 1024)} kB)`);
