// Protocol tests: the compiled client code (out/*.js) against the real `kbls serve` over stdio.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { pathToFileURL } = require("node:url");
const kb = require("../../out/protocol.js");
const { hitsToItems, SearchController } = require("../../out/searchPicker.js");
const { CancellationSource } = require("../../out/cancellation.js");
const statusModel = require("../../out/statusModel.js");
const { locateServer, nodeDeps, isNotFound } = require("../../out/serverLocator.js");
const { makeWorkspace, storeOf, lineOf, NOTES } = require("../helpers/workspace.js");
const { startServer, sender } = require("../helpers/server.js");
const { KBLS, kblsAvailable } = require("../helpers/repo.js");
const { loadSchema, validate } = require("../helpers/jsonSchema.js");

const schema = loadSchema();

const NOTE_COUNT = Object.keys(NOTES).length;
const skip = kblsAvailable() ? false : `${KBLS} is missing (make venv)`;

test("kb/* protocol against the real kbls serve", { skip, timeout: 240000 }, async (t) => {
  const ws = makeWorkspace("kbls-proto-");
  const uriOf = (rel) => pathToFileURL(path.join(ws, rel)).href;
  let server;
  t.after(async () => {
    if (server) await server.close();
    fs.rmSync(ws, { recursive: true, force: true });
  });
  server = await startServer(ws);
  const conn = sender(server.conn);

  await t.test("initialize advertises hover, workspace symbols and save sync", () => {
    const caps = server.init.capabilities;
    assert.ok(caps.hoverProvider, "hoverProvider");
    assert.ok(caps.workspaceSymbolProvider, "workspaceSymbolProvider");
    assert.ok(caps.textDocumentSync !== undefined, "textDocumentSync");
  });

  let status;
  await t.test("kb/status: the index becomes ready with every note of the root", async () => {
    status = await server.waitIndexed(NOTE_COUNT);
    assert.equal(typeof status.version, "string");
    assert.equal(status.roots.length, 1);
    assert.equal(status.roots[0].uri.replace(/\/$/, ""), server.rootUri.replace(/\/$/, ""));
    assert.equal(status.roots[0].files, NOTE_COUNT);
    assert.ok(status.roots[0].chunks >= NOTE_COUNT);
    assert.ok(status.dimension > 0);
    assert.ok(Array.isArray(status.roots[0].errors));
    assert.equal(status.roots[0].store, storeOf(ws), "the store beside the workspace, as its .kbls.yaml says");
  });

  await t.test("KB: Show Status formats the real kb/status answer", () => {
    const md = statusModel.formatStatusMarkdown(status);
    assert.match(md, new RegExp(`\\*\\*Indexed:\\*\\* ${NOTE_COUNT} notes`));
    assert.match(md, /\*\*State:\*\* ready/);
  });

  await t.test("the status bar reaches the note count from what the server sent", async () => {
    const snap = statusModel.emptySnapshot();
    snap.phase = "running";
    for (const p of server.events.progress) statusModel.applyProgress(snap, String(p.token), p.value);
    for (const n of server.events.indexStatus) statusModel.applyIndexStatus(snap, n);
    statusModel.applyStatusResult(snap, status);
    assert.equal(statusModel.renderStatus(snap).text, `$(book) KB: ${NOTE_COUNT} notes`);
  });

  await t.test("kb/search finds the note by meaning; hits have the documented shape", async () => {
    const res = await kb.search(conn, { query: "who owns the heap data after a move", limit: 5 });
    assert.ok(Array.isArray(res.hits) && res.hits.length > 0, JSON.stringify(res));
    assert.equal(typeof res.tookMs, "number");
    assert.equal(res.index.state, "ready");
    const top = res.hits[0];
    assert.equal(top.path, "rust/ownership.md", JSON.stringify(res.hits.map((h) => h.path)));
    assert.equal(top.uri, uriOf("rust/ownership.md"));
    assert.equal(top.range.start.character, 0);
    assert.equal(top.range.end.character, 0);
    assert.ok(top.range.end.line > top.range.start.line);
    for (const k of ["title", "breadcrumb", "snippet"]) assert.equal(typeof top[k], "string", k);
    assert.ok("semantic" in top.signals && "lexical" in top.signals);
    assert.ok(Array.isArray(top.reasons));
    // The chunk holds the sentence the query paraphrases (small notes may be one chunk).
    const line = lineOf("rust/ownership.md", /After a move, the new binding owns/);
    assert.ok(top.range.start.line <= line && line < top.range.end.line, JSON.stringify(top.range));
    assert.ok(top.range.end.line <= NOTES["rust/ownership.md"].split("\n").length);
  });

  await t.test("picker items built from real hits show title, section and path", async () => {
    const res = await kb.search(conn, { query: "feeding a sourdough starter", limit: 3 });
    const items = hitsToItems(res.hits);
    assert.equal(items[0].label, "Sourdough bread");
    assert.match(items[0].description, /baking\/sourdough\.md/);
    assert.ok(items[0].detail.length > 0);
  });

  await t.test("query syntax passes through: path: and tag: filter on the server", async () => {
    const byPath = await kb.search(conn, { query: "path:travel/** trains and buses", limit: 10 });
    assert.ok(byPath.hits.length > 0);
    for (const h of byPath.hits) assert.match(h.path, /^travel\//);
    const byTag = await kb.search(conn, { query: "tag:git history", limit: 10 });
    assert.ok(byTag.hits.length > 0);
    for (const h of byTag.hits) assert.equal(h.path, "dev/git-rebase.md");
  });

  await t.test("lexical and semantic modes answer too", async () => {
    for (const mode of ["lexical", "semantic"]) {
      const res = await kb.search(conn, { query: "Shinkansen", mode, limit: 3 });
      assert.equal(res.hits[0]?.path, "travel/kyoto.md", `${mode}: ${JSON.stringify(res.hits.map((h) => h.path))}`);
    }
  });

  await t.test("a cancelled kb/search gets RequestCancelled or its answer, never a hang", async () => {
    const source = new CancellationSource();
    const p = kb.search(conn, { query: "bread crust oven temperature", limit: 50 }, source.token);
    source.cancel();
    const outcome = await server.withTimeout(
      p.then(
        (r) => ({ ok: r }),
        (e) => ({ err: e }),
      ),
      30000,
      "cancelled kb/search",
    );
    if (outcome.err) assert.ok(kb.isCancellation(outcome.err), `expected RequestCancelled, got ${outcome.err.code} ${outcome.err.message}`);
    t.diagnostic(outcome.err ? "cancelled search answered RequestCancelled" : "server answered before the cancel arrived");
  });

  await t.test("SearchController against the server: only the last of quick keystrokes is shown", async () => {
    const shown = [];
    const controller = new SearchController({
      debounceMs: 20,
      run: (q, token) => kb.search(conn, { query: q, limit: 5 }, token),
      onResults: (q, r) => shown.push([q, r]),
      onError: (q, e) => shown.push([q, e]),
    });
    for (const v of ["g", "gi", "git", "git r", "git rebase squash"]) {
      controller.update(v);
      await new Promise((r) => setTimeout(r, 5));
    }
    await server.waitFor(() => shown.length > 0, 30000, "search results");
    await new Promise((r) => setTimeout(r, 300));
    controller.dispose();
    assert.equal(shown.length, 1, JSON.stringify(shown.map((s) => s[0])));
    assert.equal(shown[0][0], "git rebase squash");
    assert.equal(shown[0][1].hits[0].path, "dev/git-rebase.md");
  });

  await t.test("kb/related: other notes with reasons, never the note itself", async () => {
    const res = await kb.related(conn, { uri: uriOf("rust/ownership.md"), limit: 5 });
    assert.ok(res.hits.length > 0);
    for (const h of res.hits) assert.notEqual(h.path, "rust/ownership.md");
    assert.equal(res.hits[0].path, "rust/borrowing.md", JSON.stringify(res.hits.map((h) => [h.path, h.reasons])));
    assert.ok(res.hits[0].reasons.length > 0, "reasons filled");
    const items = hitsToItems(res.hits, { showReasons: true });
    assert.ok(items[0].detail.startsWith(res.hits[0].reasons[0].slice(0, 10)), items[0].detail);
  });

  await t.test("kb/related with a position uses the section under the cursor", async () => {
    const line = lineOf("baking/sourdough.md", /Dutch oven/);
    const res = await kb.related(conn, { uri: uriOf("baking/sourdough.md"), position: { line, character: 0 }, limit: 5 });
    assert.ok(Array.isArray(res.hits));
    for (const h of res.hits) assert.notEqual(h.path, "baking/sourdough.md");
  });

  await t.test("a URI outside the workspace is refused with InvalidParams", async () => {
    await assert.rejects(kb.related(conn, { uri: pathToFileURL("/etc/passwd").href }), (e) => e.code === -32602);
    await assert.rejects(server.conn.sendRequest("kb/search", { query: 42 }), (e) => e.code === -32602);
    // The daemon keeps running after an error.
    const res = await kb.status(conn);
    assert.equal(res.state, "ready");
  });

  await t.test("hover in markdown lists related notes as links to file#L", async () => {
    const uri = uriOf("rust/borrowing.md");
    server.conn.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "markdown", version: 1, text: NOTES["rust/borrowing.md"] },
    });
    const line = lineOf("rust/borrowing.md", /^## Mutable references/);
    const hover = await server.withTimeout(
      server.conn.sendRequest("textDocument/hover", { textDocument: { uri }, position: { line, character: 5 } }),
      30000,
      "hover",
    );
    assert.ok(hover && hover.contents, `hover: ${JSON.stringify(hover)}`);
    const md = typeof hover.contents === "string" ? hover.contents : hover.contents.value;
    assert.match(md, /\]\(file:\/\/[^)]+#L\d+\)/, md);
    assert.match(md, /ownership\.md/, md);
  });

  await t.test("workspace/symbol returns chunks as SymbolInformation", async () => {
    const syms = await server.conn.sendRequest("workspace/symbol", { query: "interactive rebase squash commits" });
    assert.ok(Array.isArray(syms) && syms.length > 0);
    assert.match(syms[0].location.uri, /git-rebase\.md$/);
  });

  await t.test("kb/reindex queues files and reports $/progress begin…end", async () => {
    const before = server.events.progress.length;
    const res = await kb.reindex(conn, { force: true });
    assert.equal(typeof res.queued, "number");
    assert.ok(res.queued >= 0);
    await server.waitFor(
      () => server.events.progress.slice(before).some((p) => p.value && p.value.kind === "end"),
      60000,
      "$/progress end after kb/reindex",
    );
    const kinds = server.events.progress.slice(before).map((p) => p.value.kind);
    assert.equal(kinds[0], "begin", JSON.stringify(kinds));
    await server.waitIndexed(NOTE_COUNT);
  });

  await t.test("the server sent kb/indexStatus notifications with the documented fields", () => {
    assert.ok(server.events.indexStatus.length > 0, "at least one kb/indexStatus");
    for (const n of server.events.indexStatus) {
      assert.ok(["loading", "indexing", "ready", "error"].includes(n.state), JSON.stringify(n));
      assert.equal(typeof n.pending, "number");
    }
  });

  await t.test("the real server's answers match docs/protocol.schema.json exactly (no field missing or extra)", async () => {
    const check = (schemaPart, value, what) =>
      assert.deepEqual(validate(schemaPart, value, schema, { strict: true }), [], `${what}: ${JSON.stringify(value).slice(0, 500)}`);
    const requests = [
      ["kb/search", kb.searchParams("who owns the heap data", { limit: 3, mode: "hybrid", groupByFile: true })],
      ["kb/search", kb.searchParams("tag:rust borrowing", { filters: { paths: ["rust/**"] } })],
      ["kb/related", kb.relatedParams(uriOf("rust/ownership.md"), { line: 8, character: 0 }, 3)],
      ["kb/status", {}],
      ["kb/reindex", kb.reindexParams({ uris: [uriOf("rust/ownership.md")] })],
      ["kb/tags", kb.tagsParams({ prefix: "ru", limit: 5 })],
      ["kb/notes", kb.notesParams({ limit: 3, offset: 1, filters: { paths: ["rust/**"] } })],
    ];
    for (const [method, params] of requests) {
      if (schema.methods[method].params) check(schema.methods[method].params, params, `${method} params`);
      const raw = await server.conn.sendRequest(method, params);
      check(schema.methods[method].result, raw, `${method} result`);
    }
    for (const n of server.events.indexStatus) check(schema.notifications["kb/indexStatus"].params, n, "kb/indexStatus");
    await server.waitIndexed(NOTE_COUNT);
  });

  await t.test("didSave of an edited note re-indexes it", async () => {
    const rel = "dev/git-rebase.md";
    const file = path.join(ws, rel);
    fs.appendFileSync(file, "\n## Autosquash\n\nThe zebra-striped flamingo option autosquash reorders fixup commits.\n");
    server.conn.sendNotification("textDocument/didSave", { textDocument: { uri: uriOf(rel) } });
    let found;
    const deadline = Date.now() + 30000;
    while (Date.now() < deadline) {
      const res = await kb.search(conn, { query: "zebra-striped flamingo", mode: "lexical", limit: 3 });
      if (res.hits[0]?.path === rel) {
        found = res.hits[0];
        break;
      }
      await new Promise((r) => setTimeout(r, 300));
    }
    assert.ok(found, "the saved edit was indexed");
  });
});

test("serverLocator finds the real kbls through kbls.serverPath and PATH", { skip }, async () => {
  const bySetting = await locateServer({ serverPath: KBLS }, nodeDeps());
  assert.ok(!isNotFound(bySetting));
  assert.equal(bySetting.command, KBLS);
  assert.deepEqual(bySetting.args, ["serve"]);
  const byPath = await locateServer({}, nodeDeps({ env: { PATH: path.dirname(KBLS) } }));
  assert.equal(byPath.command, KBLS);
  const byPython = await locateServer({ pythonPath: path.join(path.dirname(KBLS), "python") }, nodeDeps({ env: { PATH: "" } }));
  assert.equal(byPython.command, KBLS, "the venv's kbls next to its python");
});
