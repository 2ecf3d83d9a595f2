// What the tests of the bundled extension in the fake host share: an ExtensionContext with real
// global storage and a globalState that can outlive one activation, every process the extension
// spawns (so a test can check that none started, and end the ones left), the extension loaded in
// a fake host and cleaned up after the test (inFakeHost), and waitFor.
const childProcess = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { createHost, installVscode } = require("./fake-vscode");
const { EXT_DIR } = require("./repo");

const spawned = [];
const originalSpawn = childProcess.spawn;
childProcess.spawn = function (...args) {
  const proc = originalSpawn.apply(this, args);
  spawned.push({ proc, command: args[0], args: args[1] });
  return proc;
};

/** The processes spawned since `from` whose command line mentions `serve` (a kbls server). */
function serversSpawned(from = 0) {
  return spawned.slice(from).filter((s) => Array.isArray(s.args) && s.args.includes("serve"));
}

function killSpawned() {
  for (const { proc } of spawned.splice(0)) if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
}

/** A Memento like context.globalState; pass the same one to a second activation to model a new session. */
function memento(initial = {}) {
  const data = new Map(Object.entries(initial));
  return {
    data,
    get: (k, d) => (data.has(k) ? data.get(k) : d),
    update: async (k, v) => void (v === undefined ? data.delete(k) : data.set(k, v)),
    keys: () => [...data.keys()],
    setKeysForSync() {},
  };
}

function makeContext(host, { globalState = memento(), storageDir } = {}) {
  const storage = storageDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "kbls-global-storage-"));
  const pkg = JSON.parse(fs.readFileSync(path.join(EXT_DIR, "package.json"), "utf8"));
  return {
    subscriptions: [],
    extensionPath: EXT_DIR,
    extensionUri: host.vscode.Uri.file(EXT_DIR),
    globalStorageUri: host.vscode.Uri.file(storage),
    globalState,
    workspaceState: memento(),
    extension: { id: "kbls.kbls", packageJSON: pkg },
  };
}

/** Loads dist/extension.js afresh (each activation gets its own module state). */
function loadExtension() {
  const bundle = path.join(EXT_DIR, "dist", "extension.js");
  delete require.cache[bundle];
  return require(bundle);
}

async function disposeAll(ext, context) {
  await Promise.race([ext.deactivate(), new Promise((r) => setTimeout(r, 10000))]);
  for (const d of context.subscriptions) {
    try {
      d.dispose();
    } catch {}
  }
}

/**
 * The bundled extension, loaded afresh, in a fake host with these workspace folders and settings
 * (not activated yet). After the test `t`: deactivated, its subscriptions disposed, the fake
 * `vscode` module uninstalled, every spawned process ended, and the folders deleted.
 */
function inFakeHost(t, { folders, settings }) {
  const host = createHost({ workspaceFolders: folders, settings });
  const uninstall = installVscode(host);
  const ext = loadExtension();
  const context = makeContext(host);
  t.after(async () => {
    await disposeAll(ext, context);
    uninstall();
    killSpawned();
    for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
  });
  return { host, ext, context };
}

function waitFor(what, fn, ms = 60000, every = 100) {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + ms;
    const tick = async () => {
      let v;
      try {
        v = await fn();
      } catch (e) {
        v = undefined;
      }
      if (v) return resolve(v);
      if (Date.now() > deadline) return reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
      setTimeout(tick, every);
    };
    tick();
  });
}

module.exports = { spawned, serversSpawned, killSpawned, memento, makeContext, loadExtension, disposeAll, inFakeHost, waitFor };
