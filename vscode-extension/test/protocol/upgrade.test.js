// A server of another version than the extension, in the extension's own environment: the
// extension offers the upgrade, and accepting it reinstalls from the wheel the extension carries.
// Real Python, venv and pip; tiny offline wheels stand in for the two server versions.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { execFileSync } = require("node:child_process");
const { createHost, installVscode } = require("../helpers/fake-vscode.js");
const { makeWorkspace } = require("../helpers/workspace.js");
const { tinyWheel } = require("../helpers/tinyWheel.js");
const { killSpawned, makeContext, loadExtension, disposeAll, waitFor } = require("../helpers/extensionHost.js");
const { EXT_DIR } = require("../helpers/repo.js");

const pkg = JSON.parse(fs.readFileSync(path.join(EXT_DIR, "package.json"), "utf8"));
let python;
try {
  python = execFileSync("python3", ["-c", "import sys; assert sys.version_info >= (3, 10); print(sys.executable)"], { encoding: "utf8" }).trim();
} catch {}

test("an older server in the extension's environment is offered an upgrade, which installs the bundled version", { skip: python ? false : "no python >= 3.10", timeout: 240000 }, async (t) => {
  const { installServer, nodeInstallDeps, managedVenv } = require("../../out/serverInstall.js");
  const ws = makeWorkspace("kbls-upgrade-");
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), "kbls-upgrade-storage-"));
  const extCopy = fs.mkdtempSync(path.join(os.tmpdir(), "kbls-upgrade-ext-"));
  const empty = path.join(ws, "empty-bin");
  fs.mkdirSync(empty);
  const savedPath = process.env.PATH;
  // The environment as an older extension left it.
  const old = await installServer(
    { storageDir: storage, python: { command: python, args: [], label: "test", version: "3" }, wheel: tinyWheel(extCopy, "0.0.9"), version: "0.0.9" },
    nodeInstallDeps(),
    () => {},
  );
  // This extension carries the server of its own version.
  tinyWheel(extCopy, pkg.version);

  process.env.PATH = empty; // no kbls on PATH: the extension's environment is the one found
  const host = createHost({ workspaceFolders: [ws], settings: {} });
  const offers = [];
  host.respond = (level, m, items) => {
    if (items.includes("Upgrade kbls server")) {
      offers.push(m);
      return "Upgrade kbls server";
    }
    return undefined;
  };
  const uninstall = installVscode(host);
  const ext = loadExtension();
  const context = makeContext(host, { storageDir: storage });
  context.extensionPath = extCopy;
  t.after(async () => {
    process.env.PATH = savedPath;
    await disposeAll(ext, context);
    uninstall();
    killSpawned();
    for (const d of [ws, storage, extCopy]) fs.rmSync(d, { recursive: true, force: true });
  });

  await ext.activate(context);
  await waitFor("the upgrade offer", () => offers.length > 0, 60000);
  assert.match(offers[0], new RegExp(`installed by the extension is version 0\\.0\\.9; the extension is ${pkg.version.replace(/\./g, "\\.")}`));
  assert.ok(host.output.join("").includes(`Starting: ${old.kbls} serve`), "the extension's own environment was found");
  await waitFor("the upgraded server", () => {
    try {
      return execFileSync(old.kbls, ["--version"], { encoding: "utf8" }).trim() === `kbls ${pkg.version}`;
    } catch {
      return false;
    }
  }, 180000).catch((e) => {
    throw new Error(`${e.message}; output: ${host.output.join("").slice(-2000)}`);
  });
  await waitFor("the install's log line", () => host.output.join("").includes(`Installed: ${old.kbls} ${pkg.version} (upgraded)`), 30000);
  // The extension restarts the upgraded server and asks its version again: now the same, no offer.
  await waitFor("the restarted server's version", () => host.output.join("").includes(`Server version: ${pkg.version} (extension ${pkg.version})`), 60000);
  assert.equal(fs.existsSync(managedVenv(storage)), true);
  assert.equal(offers.length, 1, "offered once");
});
