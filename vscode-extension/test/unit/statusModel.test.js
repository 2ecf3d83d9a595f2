// Unit tests of the status-bar text and the KB: Show Status document.
const test = require("node:test");
const assert = require("node:assert/strict");
const m = require("../../out/statusModel.js");

const status = {
  version: "0.1.0",
  state: "ready",
  queue: 0,
  model: "sentence-transformers/all-MiniLM-L6-v2 (int8, bundled)",
  dimension: 384,
  embeddedSinceStart: 12,
  reusedSinceStart: 340,
  roots: [
    {
      uri: "file:///home/me/my%20notes",
      store: "/home/me/.cache/kbls/notes-3f2a9c1b",
      storeBytes: 5242880,
      files: 210,
      chunks: 1432,
      model: "sentence-transformers/all-MiniLM-L6-v2 (int8, bundled)",
      dimension: 384,
      sqlite: { module: "sqlean", version: "3.50.4", vec: "v0.1.9" },
      errors: [{ path: "broken.md", reason: "invalid UTF-8 at byte 12" }],
    },
    { uri: "file:///work/b", store: "/s", storeBytes: 0, files: 1, chunks: 3, model: "m", dimension: 384, errors: [] },
  ],
};

test("the status bar walks through starting, progress, indexing, then the note count", () => {
  const s = m.emptySnapshot();
  assert.equal(m.renderStatus(s).text, "$(sync~spin) KB: starting");
  s.phase = "running";
  m.applyProgress(s, "t1", { kind: "begin", title: "Indexing", message: "0/10 files", percentage: 0 });
  assert.equal(m.renderStatus(s).text, "$(sync~spin) KB: indexing 0%");
  m.applyProgress(s, "t1", { kind: "report", message: "4/10 files", percentage: 40 });
  const v = m.renderStatus(s);
  assert.equal(v.text, "$(sync~spin) KB: indexing 40%");
  assert.match(v.tooltip, /Indexing 40% \(4\/10 files\)/);
  assert.equal(v.busy, true);
  m.applyProgress(s, "t1", { kind: "end" });
  m.applyIndexStatus(s, { state: "indexing", pending: 3, files: 7, chunks: 20, message: "a.md" });
  assert.equal(m.renderStatus(s).text, "$(sync~spin) KB: indexing (3 left)");
  m.applyIndexStatus(s, { state: "ready", pending: 0, files: 10, chunks: 42 });
  const ready = m.renderStatus(s);
  assert.equal(ready.text, "$(book) KB: 10 notes");
  assert.match(ready.tooltip, /42 chunks/);
  assert.equal(ready.busy, false);
});

test("kb/status fills the count summed over roots; one note is singular", () => {
  const s = m.emptySnapshot();
  s.phase = "running";
  m.applyStatusResult(s, status);
  assert.equal(m.renderStatus(s).text, "$(book) KB: 211 notes");
  m.applyIndexStatus(s, { state: "ready", pending: 0, files: 1 });
  assert.equal(m.renderStatus(s).text, "$(book) KB: 1 note");
});

test("loading, error, missing server and failures have their own text", () => {
  const s = m.emptySnapshot();
  s.phase = "running";
  m.applyIndexStatus(s, { state: "loading", pending: 0 });
  assert.equal(m.renderStatus(s).text, "$(sync~spin) KB: loading model");
  m.applyIndexStatus(s, { state: "error", pending: 0, message: "disk full" });
  assert.match(m.renderStatus(s).tooltip, /disk full/);
  assert.equal(m.renderStatus(s).warning, true);
  m.applyIndexStatus(s, { state: "error", pending: 0, message: "", error: "/n: store: .kbls is inside the root" });
  assert.match(m.renderStatus(s).tooltip, /error: \/n: store: \.kbls is inside the root/);
  m.applyStatusResult(s, { ...status, state: "error", error: "/n: cannot write the store" });
  assert.match(m.renderStatus(s).tooltip, /cannot write the store/);
  s.phase = "notFound";
  s.detail = "install kbls";
  assert.equal(m.renderStatus(s).text, "$(warning) KB: no server");
  assert.match(m.renderStatus(s).tooltip, /install kbls/);
  s.phase = "failed";
  assert.match(m.renderStatus(s).tooltip, /Restart Server/);
  s.phase = "installing";
  s.detail = "Downloading numpy…";
  assert.equal(m.renderStatus(s).text, "$(sync~spin) KB: installing server");
  assert.match(m.renderStatus(s).tooltip, /Downloading numpy/);
  assert.equal(m.renderStatus(s).busy, true);
});

test("two progress tokens: the bar follows the latest open one", () => {
  const s = m.emptySnapshot();
  s.phase = "running";
  m.applyProgress(s, "a", { kind: "begin", title: "Loading model" });
  m.applyProgress(s, "b", { kind: "begin", title: "Indexing", percentage: 10 });
  assert.equal(m.renderStatus(s).text, "$(sync~spin) KB: indexing 10%");
  m.applyProgress(s, "b", { kind: "end" });
  assert.equal(m.renderStatus(s).text, "$(sync~spin) KB: indexing");
  m.applyProgress(s, "a", { kind: "end" });
  assert.equal(m.renderStatus(s).text, "$(sync~spin) KB: starting", "no count yet");
});

test("formatStatusMarkdown says why the index or a root is in error", () => {
  const refused = structuredClone(status);
  refused.state = "error";
  refused.error = "/home/me/notes: store: .kbls is inside the workspace root";
  refused.roots[0].error = "store: .kbls is inside the workspace root";
  const md = m.formatStatusMarkdown(refused);
  assert.match(md, /- \*\*Error:\*\* \/home\/me\/notes: store: \.kbls is inside/);
  assert.match(md, /- \*\*Problem:\*\* store: \.kbls is inside the workspace root/);
  assert.doesNotMatch(m.formatStatusMarkdown(status), /Problem:|Error:/);
});

test("formatStatusMarkdown makes kb/status readable", () => {
  const md = m.formatStatusMarkdown(status, { command: "/x/kbls serve" });
  assert.match(md, /^# kbls status/);
  assert.match(md, /\*\*State:\*\* ready/);
  assert.match(md, /\*\*Indexed:\*\* 211 notes, 1,435 chunks in 2 roots/);
  assert.match(md, /## \/home\/me\/my notes/, "root URI shown as a decoded path");
  assert.match(md, /- \*\*Store:\*\* \/home\/me\/.cache\/kbls\/notes-3f2a9c1b \(5.0 MiB\)/);
  assert.match(md, /- \*\*Notes:\*\* 210, \*\*chunks:\*\* 1432/);
  assert.match(md, /sqlean 3.50.4, sqlite-vec v0.1.9/);
  assert.match(md, /`broken.md`: invalid UTF-8 at byte 12/);
  assert.match(md, /No indexing errors\./);
  assert.match(md, /`\/x\/kbls serve`/);
});

test("formatBytes", () => {
  assert.equal(m.formatBytes(0), "0 B");
  assert.equal(m.formatBytes(1536), "1.5 KiB");
  assert.equal(m.formatBytes(50 * 1024 * 1024), "50 MiB");
});

test("ready with nothing queued ends a progress whose end never came (a reconnecting client)", () => {
  const s = m.emptySnapshot();
  s.phase = "running";
  m.applyProgress(s, "t", { kind: "begin", title: "Indexing", percentage: 0 });
  assert.match(m.renderStatus(s).text, /KB: indexing 0%/);
  m.applyIndexStatus(s, { state: "ready", pending: 3, files: 5, chunks: 5, message: "" });
  assert.match(m.renderStatus(s).text, /KB: indexing/, "files still queued: the progress stays");
  m.applyIndexStatus(s, { state: "ready", pending: 0, files: 5, chunks: 5, message: "" });
  assert.equal(m.renderStatus(s).text, "$(book) KB: 5 notes");
});

test("kb/status saying ready with an empty queue also ends a progress left open", () => {
  const s = m.emptySnapshot();
  s.phase = "running";
  m.applyProgress(s, "t", { kind: "begin", title: "Indexing", percentage: 0 });
  const status = { version: "x", state: "indexing", queue: 2, model: "m", dimension: 3, embeddedSinceStart: 0, reusedSinceStart: 0, roots: [{ files: 6, chunks: 6 }] };
  m.applyStatusResult(s, status);
  assert.match(m.renderStatus(s).text, /KB: indexing/);
  m.applyStatusResult(s, { ...status, state: "ready", queue: 0 });
  assert.equal(m.renderStatus(s).text, "$(book) KB: 6 notes");
});

test("while the vectors follow, the status bar shows the share embedded and the ETA", () => {
  const s = m.emptySnapshot();
  s.phase = "running";
  m.applyProgress(s, "t1", { kind: "begin", title: "kbls: indexing", message: "embedding: 818 chunks left", percentage: 42 });
  m.applyIndexStatus(s, {
    state: "indexing", pending: 0, files: 198, chunks: 1410, message: "embedding", error: null,
    embedded: 0.42, waiting: 818, rate: 31.2, etaSeconds: 26,
  });
  const v = m.renderStatus(s);
  assert.equal(v.text, "$(sync~spin) KB: embedding 42% · ETA 26s");
  assert.match(v.tooltip, /Every note is searchable by its words; 818 chunks of 1,410 chunks wait for their vectors \(42% embedded, 31\.2 chunks\/s, about 26s left\)/);
  m.applyIndexStatus(s, { state: "ready", pending: 0, files: 198, chunks: 1410, message: "", error: null, embedded: 1, waiting: 0, rate: 0, etaSeconds: 0 });
  assert.equal(m.renderStatus(s).text, "$(book) KB: 198 notes");
  assert.equal(m.duration(3725), "1h02m");
});
