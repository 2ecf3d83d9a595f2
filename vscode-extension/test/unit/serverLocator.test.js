// Unit tests of how the server is found: setting, PATH, Python; and the not-found message.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { locateServer, isNotFound, expandPath, nodeDeps, displayCommand, PYTHON_LAUNCHER } = require("../../out/serverLocator.js");

function deps({ files = [], withKbls = [], pythonExt, env = { PATH: "/usr/bin:/opt/bin", HOME: "/home/me" } } = {}) {
  return {
    env,
    platform: "linux",
    workspaceFolder: "/ws",
    isExecutable: async (f) => files.includes(f),
    pythonHasKbls: async (p) => withKbls.includes(p),
    pythonExtensionInterpreter: pythonExt ? async () => pythonExt : undefined,
  };
}

test("kbls.serverPath wins and extra args follow `serve`", async () => {
  const r = await locateServer(
    { serverPath: "/opt/kbls/bin/kbls", extraArgs: ["--log-level", "debug"] },
    deps({ files: ["/opt/kbls/bin/kbls", "/usr/bin/kbls"] }),
  );
  assert.equal(r.command, "/opt/kbls/bin/kbls");
  assert.deepEqual(r.args, ["serve", "--log-level", "debug"]);
  assert.equal(r.source, "serverPath");
  assert.equal(r.display, "/opt/kbls/bin/kbls serve --log-level debug");
});

test("a wrong kbls.serverPath is an error naming the setting, not a silent fallback", async () => {
  const r = await locateServer({ serverPath: "/nope/kbls" }, deps({ files: ["/usr/bin/kbls"] }));
  assert.ok(isNotFound(r));
  assert.equal(r.kind, "misconfigured");
  assert.match(r.message, /kbls.serverPath/);
  assert.equal(r.setting, "kbls.serverPath");
});

test("serverPath expands ${workspaceFolder}, ~ and workspace-relative paths", async () => {
  const d = deps({ files: ["/ws/.venv/bin/kbls"] });
  assert.equal((await locateServer({ serverPath: "${workspaceFolder}/.venv/bin/kbls" }, d)).command, "/ws/.venv/bin/kbls");
  assert.equal((await locateServer({ serverPath: ".venv/bin/kbls" }, d)).command, "/ws/.venv/bin/kbls");
  assert.equal(expandPath("~/x/kbls", d), "/home/me/x/kbls");
});

test("else kbls on PATH", async () => {
  const r = await locateServer({}, deps({ files: ["/opt/bin/kbls"] }));
  assert.equal(r.command, "/opt/bin/kbls");
  assert.equal(r.source, "path");
});

test("else kbls.pythonPath: its venv's kbls script, or the interpreter with the package", async () => {
  const venv = await locateServer({ pythonPath: "/v/bin/python" }, deps({ files: ["/v/bin/python", "/v/bin/kbls"] }));
  assert.equal(venv.command, "/v/bin/kbls");
  assert.equal(venv.source, "pythonPath");
  const py = await locateServer({ pythonPath: "/p/python3" }, deps({ files: ["/p/python3"], withKbls: ["/p/python3"] }));
  assert.equal(py.command, "/p/python3");
  assert.deepEqual(py.args, ["-c", PYTHON_LAUNCHER, "serve"]);
});

test("else the Python extension's interpreter; the setting takes precedence over it", async () => {
  const r = await locateServer({}, deps({ files: ["/e/python"], withKbls: ["/e/python"], pythonExt: "/e/python" }));
  assert.equal(r.command, "/e/python");
  assert.equal(r.source, "pythonExtension");
  const nf = await locateServer(
    { pythonPath: "/p/python" },
    deps({ files: ["/e/python", "/p/python"], withKbls: ["/e/python"], pythonExt: "/e/python" }),
  );
  assert.ok(isNotFound(nf), "a pythonPath without the package is reported, not replaced");
  assert.equal(nf.kind, "misconfigured");
  assert.equal(nf.setting, "kbls.pythonPath");
  const wheel = "/ext/server/kbls-0.1.0-py3-none-any.whl";
  const told = await locateServer({ pythonPath: "/p/python", bundledWheel: wheel }, deps({ files: ["/p/python"] }));
  assert.match(told.message, /`\/p\/python -m pip install \/ext\/server\/kbls-0\.1\.0-py3-none-any\.whl`/);
});

test("nothing found: a first start, whose message offers the install and names commands that work", async () => {
  // kbls is not on the package index: the hint installs the wheel the VSIX carries, by its path.
  const wheel = "/home/me/My Extensions/kbls.kbls-0.1.0/server/kbls-0.1.0-py3-none-any.whl";
  const r = await locateServer({ bundledWheel: wheel }, deps({ files: ["/e/python"], pythonExt: "/e/python" }));
  assert.ok(isNotFound(r));
  assert.equal(r.kind, "missing", "not an error: the normal first start");
  assert.match(r.message, /^kbls needs its language server, which is not installed yet\. Install kbls server /);
  assert.ok(r.message.includes(`\`uv tool install '${wheel}'\``), r.message);
  assert.ok(r.message.includes(`\`pipx install '${wheel}'\``), r.message);
  assert.match(r.message, /KB: Restart Server/);
  assert.doesNotMatch(r.message, /(uv tool|pipx) install kbls\b/, "kbls is not on the package index");
  assert.doesNotMatch(r.message, /\bpip install/, "never a bare pip install (PEP 668)");
  assert.match(r.message, /kbls.serverPath/);
  assert.deepEqual(r.tried, ["`kbls` on PATH", "the Python extension's interpreter: /e/python"]);
  assert.equal(r.setting, "kbls.serverPath");
  // An extension run from its sources carries no wheel: a clone's install.
  const bare = await locateServer({}, deps());
  assert.match(bare.message, /from a clone of kbls, `uv tool install \.\/` \(or `pipx install \.\/`\) in the clone/);
});

test("nodeDeps checks real files: executables yes, plain files and folders no", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kbls-locator-"));
  try {
    const exe = path.join(dir, "kbls");
    fs.writeFileSync(exe, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    fs.writeFileSync(path.join(dir, "plain"), "x", { mode: 0o644 });
    const d = nodeDeps({ env: { PATH: dir } });
    assert.equal(await d.isExecutable(exe), true);
    assert.equal(await d.isExecutable(path.join(dir, "plain")), false);
    assert.equal(await d.isExecutable(dir), false);
    const r = await locateServer({}, d);
    assert.equal(r.command, exe);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("displayCommand quotes what a shell would need quoted", () => {
  assert.equal(displayCommand("/a b/kbls", ["serve", "it's"]), "'/a b/kbls' serve 'it'\\''s'");
});
