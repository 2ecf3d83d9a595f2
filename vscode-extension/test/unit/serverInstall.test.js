// The extension's own server install: finding a Python >= 3.10 (real interpreters where the
// machine has them), a real venv + pip install of a tiny offline wheel, upgrade, failure clean-up,
// and what is said about a version mismatch.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { execFileSync } = require("node:child_process");
const { findPython, isNoPython, isSupported, probeVersion, venvScript } = require("../../out/pythonFinder.js");
const {
  installServer,
  nodeInstallDeps,
  InstallError,
  managedVenv,
  bundledWheelPath,
  parseServerVersion,
  pipProgress,
  adviseVersion,
  versionMessage,
} = require("../../out/serverInstall.js");
const { locateServer, isNotFound, nodeDeps } = require("../../out/serverLocator.js");
const { tinyWheel } = require("../helpers/tinyWheel.js");

/** A real python >= 3.10 on this machine, resolved (the e2e test uses the same lookup). */
function realPython() {
  for (const name of ["python3", "python"]) {
    try {
      const exe = execFileSync(name, ["-c", "import sys; assert sys.version_info >= (3, 10); print(sys.executable)"], { encoding: "utf8", timeout: 10000 }).trim();
      if (exe) return exe;
    } catch {}
  }
  return undefined;
}
const PYTHON = realPython();
const noPython = PYTHON ? false : "no python >= 3.10 on this machine";

function fakePythonDeps(versions, pathDirs = Object.keys(versions).map((p) => path.dirname(p))) {
  return {
    env: { PATH: [...new Set(pathDirs)].join(":") },
    platform: "linux",
    isExecutable: async (f) => f in versions,
    probeVersion: async (cmd) => versions[cmd],
  };
}

test("isSupported: 3.10 and newer", () => {
  for (const v of ["3.10.0", "3.11.7", "3.13.0", "4.0.0"]) assert.equal(isSupported(v), true, v);
  for (const v of ["3.9.18", "2.7.18", "3.6", "x"]) assert.equal(isSupported(v), false, v);
});

test("findPython: the Python extension's interpreter first, then python3 on PATH", async () => {
  const deps = fakePythonDeps({ "/venv/bin/python": "3.12.1", "/usr/bin/python3": "3.11.7" }, ["/usr/bin"]);
  const a = await findPython(deps, "/venv/bin/python");
  assert.equal(a.command, "/venv/bin/python");
  assert.equal(a.version, "3.12.1");
  const b = await findPython(deps);
  assert.equal(b.command, "/usr/bin/python3");
  assert.match(b.label, /python3 on PATH/);
});

test("findPython: an old interpreter is skipped; none new enough gives a message naming each with its version", async () => {
  const deps = fakePythonDeps({ "/old/python": "3.8.18", "/usr/bin/python3": "3.9.18", "/usr/bin/python": undefined }, ["/usr/bin"]);
  const r = await findPython(deps, "/old/python");
  assert.ok(isNoPython(r));
  assert.match(r.error, /needs Python 3\.10 or newer/);
  assert.match(r.error, /\/old\/python\): 3\.8\.18/);
  assert.match(r.error, /python3 on PATH \(\/usr\/bin\/python3\): 3\.9\.18/);
  const none = await findPython(fakePythonDeps({}, []));
  assert.ok(isNoPython(none));
  assert.match(none.error, /none was found/);
});

test("probeVersion runs a real interpreter; a missing one is undefined", { skip: noPython }, async () => {
  assert.match(await probeVersion(PYTHON, []), /^3\.\d+\.\d+$/);
  assert.equal(await probeVersion("/nonexistent/python3", []), undefined);
  // An old interpreter from pyenv, when the machine has one, is found and refused with its version.
  const old = path.join(process.env.PYENV_ROOT || path.join(os.homedir(), ".pyenv"), "versions");
  if (fs.existsSync(old)) {
    const dir = fs.readdirSync(old).find((v) => /^3\.[6-9]\./.test(v));
    if (dir) {
      const exe = path.join(old, dir, "bin", "python3");
      const r = await findPython({ ...nodeDeps({ env: { PATH: "" } }), probeVersion }, exe);
      assert.ok(isNoPython(r));
      assert.match(r.error, new RegExp(dir.replace(/\./g, "\\.")));
    }
  }
});

test("parseServerVersion and pip progress lines", () => {
  assert.equal(parseServerVersion("kbls 0.1.0\n"), "0.1.0");
  assert.equal(parseServerVersion("kbls 1.2.3rc1"), "1.2.3rc1");
  assert.equal(parseServerVersion("0.2.0\n"), "0.2.0");
  assert.equal(parseServerVersion("Traceback ..."), undefined);
  assert.deepEqual(pipProgress("Collecting fastembed>=0.7 (from kbls==0.1.0)"), { message: "Downloading fastembed…", increment: 1.5 });
  assert.equal(pipProgress("Installing collected packages: numpy, kbls").message, "Installing packages…");
  assert.equal(pipProgress("  Using cached numpy-2.0.whl"), undefined);
});

test("a version mismatch: an upgrade offer for the extension's own server, advice for the user's", () => {
  assert.deepEqual(adviseVersion("0.1.0", "0.1.0", true), { kind: "same" });
  assert.equal(versionMessage(adviseVersion("0.1.0", "0.1.0", false)), undefined);
  const own = adviseVersion("0.1.0", "0.2.0", true);
  assert.equal(own.kind, "upgradeManaged");
  assert.match(versionMessage(own), /installed by the extension is version 0\.1\.0.*extension is 0\.2\.0.*Upgrade/);
  const theirs = adviseVersion("0.3.0", "0.2.0", false);
  assert.equal(theirs.kind, "differs");
  // kbls is not on the package index: the upgrade is the wheel of the extension's version.
  const wheel = "/ext/server/kbls-0.2.0-py3-none-any.whl";
  assert.match(versionMessage(theirs, wheel), /version 0\.3\.0 but the extension is 0\.2\.0\. Install the server of version 0\.2\.0 over it, `uv tool install --reinstall \/ext\/server\/kbls-0\.2\.0-py3-none-any\.whl` \(or `pipx install --force \/ext\/server\/kbls-0\.2\.0-py3-none-any\.whl`\)/);
  assert.match(versionMessage(theirs), /`uv tool install --reinstall \.\/` \(or `pipx install --force \.\/`\) in a clone of kbls/);
  assert.doesNotMatch(versionMessage(theirs, wheel), /(uv tool upgrade|pipx upgrade) kbls/);
  assert.equal(adviseVersion(undefined, "0.2.0", true).kind, "unknown");
});

test("installServer: a real venv + pip install of the bundled wheel, then the locator uses it; an upgrade; a failure cleans up", { skip: noPython, timeout: 300000 }, async (t) => {
  const ext = fs.mkdtempSync(path.join(os.tmpdir(), "kbls-ext-"));
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), "kbls-storage-"));
  t.after(() => {
    fs.rmSync(ext, { recursive: true, force: true });
    fs.rmSync(storage, { recursive: true, force: true });
  });
  const python = { command: PYTHON, args: [], label: "test", version: "3.x" };
  const deps = nodeInstallDeps();
  const steps = [];
  const report = (m, inc) => steps.push([m, inc]);

  await t.test("a missing wheel is a clear error and creates nothing", async () => {
    await assert.rejects(
      installServer({ storageDir: storage, python, wheel: bundledWheelPath(ext, "0.0.9"), version: "0.0.9" }, deps, report),
      (e) => e instanceof InstallError && /wheel is missing.*npm run package.*from a clone of kbls, `uv tool install \.\/`/.test(e.message),
    );
    assert.equal(fs.existsSync(managedVenv(storage)), false);
  });

  await t.test("first install", async () => {
    const wheel = tinyWheel(ext, "0.0.1");
    assert.equal(wheel, bundledWheelPath(ext, "0.0.1"));
    const lines = [];
    const r = await installServer({ storageDir: storage, python, wheel, version: "0.0.1", onOutput: (l) => lines.push(l) }, deps, report);
    assert.equal(r.version, "0.0.1");
    assert.equal(r.upgraded, false);
    assert.equal(r.kbls, venvScript(managedVenv(storage), process.platform));
    assert.equal(execFileSync(r.kbls, ["--version"], { encoding: "utf8" }).trim(), "kbls 0.0.1");
    assert.ok(steps.some(([m]) => /Creating a Python/.test(m)), JSON.stringify(steps));
    assert.ok(lines.some((l) => /Successfully installed kbls-0\.0\.1/.test(l)), lines.join("\n"));
    const total = steps.reduce((a, [, inc]) => a + (inc ?? 0), 0);
    assert.ok(total <= 100, `progress adds up to ${total}`);
    // Later starts find it when nothing else is there.
    const located = await locateServer({ managedVenv: managedVenv(storage) }, nodeDeps({ env: { PATH: "" } }));
    assert.equal(located.source, "managed");
    assert.equal(located.command, r.kbls);
    const withPythonPath = await locateServer({ managedVenv: managedVenv(storage), pythonPath: "/nope/python" }, nodeDeps({ env: { PATH: "" } }));
    assert.ok(isNotFound(withPythonPath), "an explicit kbls.pythonPath is not silently replaced");
  });

  await t.test("upgrade in place to the extension's new version", async () => {
    const wheel = tinyWheel(ext, "0.0.2");
    const r = await installServer({ storageDir: storage, python, wheel, version: "0.0.2" }, deps, report);
    assert.equal(r.upgraded, true);
    assert.equal(execFileSync(r.kbls, ["--version"], { encoding: "utf8" }).trim(), "kbls 0.0.2");
  });

  await t.test("a server that answers another version is an error; a failed upgrade keeps the environment", async () => {
    const wheel = tinyWheel(ext, "0.0.3", { answer: "kbls 9.9.9" });
    await assert.rejects(
      installServer({ storageDir: storage, python, wheel, version: "0.0.3" }, deps, report),
      (e) => e instanceof InstallError && /says version 9\.9\.9 but the extension is 0\.0\.3/.test(e.message),
    );
    assert.ok(fs.existsSync(venvScript(managedVenv(storage), process.platform)), "the environment is still there");
  });

  await t.test("a failed first install removes the half-made environment", async () => {
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), "kbls-storage-"));
    t.after(() => fs.rmSync(fresh, { recursive: true, force: true }));
    const broken = path.join(ext, "server", "kbls-0.0.4-py3-none-any.whl");
    fs.writeFileSync(broken, "not a zip");
    await assert.rejects(
      installServer({ storageDir: fresh, python, wheel: broken, version: "0.0.4" }, deps, report),
      (e) => e instanceof InstallError && /pip install failed/.test(e.message) && e.output.length > 0,
    );
    assert.equal(fs.existsSync(managedVenv(fresh)), false);
  });
});
