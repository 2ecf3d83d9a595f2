// The Python extension as a source of the server: its selected interpreter is used when it has
// kbls, and choosing another environment there restarts the server (as the python-tools template
// does). A stand-in for the Python extension's API; the real server and the real venv.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { createHost, installVscode } = require("../helpers/fake-vscode.js");
const { makeWorkspace, NOTES } = require("../helpers/workspace.js");
const { KBLS, kblsAvailable } = require("../helpers/repo.js");
const { serversSpawned, spawned, killSpawned, makeContext, loadExtension, disposeAll, waitFor } = require("../helpers/extensionHost.js");

const NOTE_COUNT = Object.keys(NOTES).length;
const VENV_PYTHON = path.join(path.dirname(KBLS), "python");
const skip = kblsAvailable() && fs.existsSync(VENV_PYTHON) ? false : `${KBLS} and the python next to it are needed (make venv)`;

test("switching the Python extension's environment restarts the server with the new interpreter", { skip, timeout: 180000 }, async (t) => {
  const ws = makeWorkspace("kbls-pyenv-");
  const empty = path.join(ws, "empty-bin");
  fs.mkdirSync(empty);
  const savedPath = process.env.PATH;
  process.env.PATH = empty; // no kbls on PATH: the Python extension is the only source
  const host = createHost({ workspaceFolders: [ws], settings: { "kbls.search.debounceMs": 20 } });
  const listeners = new Set();
  let active = path.join(ws, "no-such-env", "bin", "python");
  const pythonApi = {
    environments: {
      getActiveEnvironmentPath: () => ({ path: active }),
      resolveEnvironment: async (p) => ({ executable: { uri: host.vscode.Uri.file(typeof p === "string" ? p : p.path) } }),
      onDidChangeActiveEnvironmentPath: (l) => (listeners.add(l), { dispose: () => listeners.delete(l) }),
    },
  };
  host.vscode.extensions.getExtension = (id) => (id === "ms-python.python" ? { isActive: true, exports: pythonApi } : undefined);
  const uninstall = installVscode(host);
  const ext = loadExtension();
  const context = makeContext(host);
  const from = spawned.length;
  t.after(async () => {
    process.env.PATH = savedPath;
    await disposeAll(ext, context);
    uninstall();
    killSpawned();
    fs.rmSync(ws, { recursive: true, force: true });
  });
  const statusText = () => host.statusItems[0]?.text ?? "";

  await ext.activate(context);
  await waitFor("KB: no server", () => statusText().includes("KB: no server"), 30000);
  // No server yet is a first start: an information prompt; where it looked is in the log.
  assert.ok(host.messages.some((m) => m.level === "info" && /not installed yet/.test(m.m)), JSON.stringify(host.messages));
  assert.match(host.output.join(""), /No kbls server installed yet\. Tried: .*the Python extension's interpreter: .*no-such-env/);
  assert.equal(serversSpawned(from).length, 0);

  // The user selects the environment that has kbls; the extension looks again without being asked.
  active = VENV_PYTHON;
  assert.ok(listeners.size > 0, "the extension listens to the Python extension");
  for (const l of listeners) l({ path: active });
  await waitFor(`"KB: ${NOTE_COUNT} notes"`, () => statusText().includes(`KB: ${NOTE_COUNT} notes`), 120000).catch((e) => {
    throw new Error(`${e.message}; status: ${statusText()}; output: ${host.output.join("").slice(-2000)}`);
  });
  const servers = serversSpawned(from);
  assert.equal(servers.length, 1);
  assert.equal(servers[0].command, KBLS, "the kbls script next to the selected interpreter");
  assert.ok(host.output.join("").includes("found via pythonExtension"));
});
