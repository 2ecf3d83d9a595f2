// Starts the real `kbls serve` over stdio and speaks LSP to it with vscode-jsonrpc (the library
// vscode-languageclient is built on). Records $/progress and kb/indexStatus for the tests.
const { spawn } = require("node:child_process");
const { pathToFileURL } = require("node:url");
const rpc = require("vscode-jsonrpc/node");
const { KBLS } = require("./repo");

async function startServer(workspace, { initializationOptions, timeoutMs = 60000 } = {}) {
  const proc = spawn(KBLS, ["serve"], { cwd: workspace, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env } });
  let stderr = "";
  proc.stderr.on("data", (d) => {
    stderr += d.toString();
    if (stderr.length > 200000) stderr = stderr.slice(-100000);
  });
  const exited = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  const events = { progress: [], indexStatus: [], log: [], progressTokens: [] };
  const waiters = new Set();
  const notify = () => {
    for (const w of [...waiters]) if (w.pred()) (waiters.delete(w), w.resolve());
  };
  conn.onRequest("window/workDoneProgress/create", (p) => {
    events.progressTokens.push(p.token);
    notify();
    return null;
  });
  conn.onRequest("workspace/configuration", (p) => (p.items || []).map(() => null));
  conn.onRequest("client/registerCapability", () => null);
  conn.onRequest("client/unregisterCapability", () => null);
  conn.onRequest("window/showMessageRequest", () => null);
  conn.onRequest("workspace/workspaceFolders", () => [{ uri: pathToFileURL(workspace).href, name: "ws" }]);
  conn.onNotification("$/progress", (p) => {
    events.progress.push(p);
    notify();
  });
  conn.onNotification("kb/indexStatus", (p) => {
    events.indexStatus.push(p);
    notify();
  });
  conn.onNotification("window/logMessage", (p) => events.log.push(p));
  conn.onNotification("window/showMessage", (p) => events.log.push(p));
  conn.onNotification("telemetry/event", () => {});
  conn.onNotification("textDocument/publishDiagnostics", () => {});
  conn.listen();

  const rootUri = pathToFileURL(workspace).href;
  const withTimeout = (promise, ms, what) =>
    Promise.race([
      promise,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms. stderr:\n${stderr.slice(-3000)}`)), ms).unref()),
      exited.then((e) => {
        throw new Error(`kbls serve exited (${JSON.stringify(e)}) during ${what}. stderr:\n${stderr.slice(-3000)}`);
      }),
    ]);

  let init;
  try {
    init = await withTimeout(
      conn.sendRequest("initialize", {
        processId: process.pid,
        clientInfo: { name: "kbls-vscode-protocol-tests" },
        rootUri,
        workspaceFolders: [{ uri: rootUri, name: "ws" }],
        capabilities: {
          window: { workDoneProgress: true },
          workspace: { workspaceFolders: true, symbol: {} },
          textDocument: { hover: { contentFormat: ["markdown", "plaintext"] }, synchronization: { didSave: true } },
        },
        initializationOptions,
      }),
      timeoutMs,
      "initialize",
    );
  } catch (err) {
    // No server object for the caller to close: do not leave the process behind.
    proc.kill("SIGKILL");
    conn.dispose();
    throw err;
  }
  conn.sendNotification("initialized", {});

  const server = {
    proc,
    conn,
    init,
    events,
    rootUri,
    get stderr() {
      return stderr;
    },
    withTimeout,
    /** Resolves when pred() holds, checked on every server event and every 250 ms. */
    waitFor(pred, ms, what) {
      if (pred()) return Promise.resolve();
      let timer;
      const p = new Promise((resolve) => {
        const w = { pred, resolve };
        waiters.add(w);
        timer = setInterval(() => notify(), 250);
      });
      return withTimeout(p, ms, what).finally(() => clearInterval(timer));
    },
    /** Polls kb/status until the index is ready with `files` notes. */
    async waitIndexed(files, ms = 120000) {
      const deadline = Date.now() + ms;
      let last;
      while (Date.now() < deadline) {
        last = await withTimeout(conn.sendRequest("kb/status", {}), 30000, "kb/status");
        const n = last.roots.reduce((a, r) => a + r.files, 0);
        if (last.state === "ready" && last.queue === 0 && n >= files) return last;
        await new Promise((r) => setTimeout(r, 300));
      }
      throw new Error(`index not ready after ${ms} ms: ${JSON.stringify(last)}\nstderr:\n${stderr.slice(-3000)}`);
    },
    async close() {
      try {
        await withTimeout(conn.sendRequest("shutdown"), 10000, "shutdown");
        conn.sendNotification("exit");
      } catch {
        // Fall through to the kill below.
      }
      const done = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), 5000))]);
      if (!done) {
        proc.kill("SIGKILL");
        await exited;
      }
      conn.dispose();
      return done;
    },
  };
  return server;
}

/** Adapts a vscode-jsonrpc connection to the extension's RequestSender; a request unanswered
 * after `ms` fails with a message instead of hanging the test. */
function sender(conn, ms = 30000) {
  return {
    sendRequest(method, params, token) {
      const p = token ? conn.sendRequest(method, params, token) : conn.sendRequest(method, params);
      let timer;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${method} got no answer in ${ms} ms`)), ms);
      });
      return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
    },
  };
}

module.exports = { startServer, sender };
