#!/usr/bin/env node
// A stand-in for `kbls serve` used only while developing the extension without the Python
// server (KBLS_BIN=test/helpers/fake-kbls.js). It speaks the documented kb/* protocol with a
// naive word-overlap ranking. The test suites themselves run against the real server.
const fs = require("node:fs");
const path = require("node:path");
const { pathToFileURL, fileURLToPath } = require("node:url");
const rpc = require("vscode-jsonrpc/node");

const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(process.stdin), new rpc.StreamMessageWriter(process.stdout));
let roots = [];
let chunks = [];
const words = (t) => (t.toLowerCase().match(/[a-z0-9]+/g) || []).filter((w) => w.length > 2);

function scan() {
  chunks = [];
  for (const root of roots) {
    const walk = (dir) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        if (e.name.startsWith(".")) continue;
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith(".md")) {
          const lines = fs.readFileSync(p, "utf8").split("\n");
          const title = (lines.find((l) => l.startsWith("title:")) || "").slice(6).trim() || e.name;
          let start = 0;
          const heads = [];
          lines.forEach((l, i) => /^#{1,6} /.test(l) && heads.push(i));
          const bounds = heads.length ? heads : [0];
          bounds.forEach((s, k) => {
            const end = k + 1 < bounds.length ? bounds[k + 1] - 1 : lines.length - 1;
            const head = lines[s].replace(/^#+\s*/, "");
            const crumb = k === 0 ? title : `${title} > ${head}`;
            const text = lines.slice(s, end + 1).join("\n");
            chunks.push({ root, file: p, rel: path.relative(root, p), title, crumb, start: k === 0 ? start : s, end, text });
          });
        }
      }
    };
    walk(root);
  }
}

function hitOf(c, score, reasons = []) {
  return {
    uri: pathToFileURL(c.file).href, path: c.rel, root: pathToFileURL(c.root).href,
    range: { start: { line: c.start, character: 0 }, end: { line: c.end + 1, character: 0 } },
    title: c.title, breadcrumb: c.crumb, snippet: c.text.replace(/\s+/g, " ").slice(0, 160),
    score, signals: { semantic: 1, lexical: null }, reasons, more: 0,
  };
}

function rank(query, exclude) {
  const q = new Set(words(query));
  return chunks
    .filter((c) => c.file !== exclude)
    .map((c) => ({ c, s: words(c.text + " " + c.title).filter((w) => q.has(w)).length }))
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s);
}

conn.onRequest("initialize", (p) => {
  roots = (p.workspaceFolders || [{ uri: p.rootUri }]).map((f) => fileURLToPath(f.uri));
  return { capabilities: { hoverProvider: true, workspaceSymbolProvider: true, textDocumentSync: { openClose: true, save: true } }, serverInfo: { name: "fake-kbls" } };
});
conn.onNotification("initialized", async () => {
  await conn.sendRequest("window/workDoneProgress/create", { token: "scan" });
  conn.sendProgress(new rpc.ProgressType(), "scan", { kind: "begin", title: "Indexing", percentage: 0 });
  conn.sendNotification("kb/indexStatus", { state: "indexing", pending: 5, files: 0, chunks: 0 });
  await new Promise((r) => setTimeout(r, 800));
  scan();
  conn.sendProgress(new rpc.ProgressType(), "scan", { kind: "report", message: "5/5 files", percentage: 100 });
  conn.sendProgress(new rpc.ProgressType(), "scan", { kind: "end" });
  conn.sendNotification("kb/indexStatus", { state: "ready", pending: 0, files: new Set(chunks.map((c) => c.file)).size, chunks: chunks.length });
});
conn.onRequest("kb/search", (p) => {
  let q = p.query;
  const pathF = (q.match(/path:(\S+)/) || [])[1];
  q = q.replace(/\b(path|tag|type):\S+/g, "");
  let r = rank(q);
  if (pathF) r = r.filter((x) => x.c.rel.startsWith(pathF.replace(/\*.*$/, "")));
  return { hits: r.slice(0, p.limit || 10).map((x) => hitOf(x.c, x.s)), tookMs: 1, index: { state: "ready", pending: 0 } };
});
conn.onRequest("kb/related", (p) => {
  const file = fileURLToPath(p.uri);
  const text = chunks.filter((c) => c.file === file).map((c) => c.text).join(" ");
  return { hits: rank(text, file).slice(0, p.limit || 10).map((x) => hitOf(x.c, x.s, ["shares words"])), tookMs: 1, index: { state: "ready", pending: 0 } };
});
conn.onRequest("kb/status", () => ({
  version: "0.0.0-fake", state: "ready", queue: 0, model: "fake", dimension: 3, embeddedSinceStart: 0, reusedSinceStart: 0,
  roots: roots.map((r) => ({ uri: pathToFileURL(r).href, store: `${r}-kbls`, storeBytes: 1234, files: new Set(chunks.filter((c) => c.root === r).map((c) => c.file)).size, chunks: chunks.length, model: "fake", dimension: 3, errors: [] })),
}));
conn.onRequest("kb/reindex", () => ({ queued: new Set(chunks.map((c) => c.file)).size }));
conn.onRequest("textDocument/hover", (p) => {
  const file = fileURLToPath(p.textDocument.uri);
  const c = chunks.find((x) => x.file === file && x.start <= p.position.line && p.position.line <= x.end);
  if (!c) return null;
  const hits = rank(c.text, file).slice(0, 3);
  const md = "**Related notes**\n\n" + hits.map((x) => `- [${x.c.title} › ${x.c.crumb.split(" > ").pop()}](${pathToFileURL(x.c.file).href}#L${x.c.start + 1}) — shares words`).join("\n");
  return { contents: { kind: "markdown", value: md } };
});
conn.onRequest("workspace/symbol", (p) => rank(p.query).slice(0, 10).map((x) => ({ name: x.c.crumb, kind: 15, location: { uri: pathToFileURL(x.c.file).href, range: { start: { line: x.c.start, character: 0 }, end: { line: x.c.end + 1, character: 0 } } } })));
conn.onRequest("shutdown", () => null);
conn.onNotification("exit", () => process.exit(0));
conn.listen();
