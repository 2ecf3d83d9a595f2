// The bundled extension (dist/extension.js) with the real vscode-languageclient and the real
// `kbls serve`, inside a fake `vscode` module: activation finds the server, the status bar reaches
// the note count, and the commands drive the server through the pickers.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { pathToFileURL } = require("node:url");
const { Position, Selection } = require("../helpers/fake-vscode.js");
const { makeWorkspace, lineOf, NOTES } = require("../helpers/workspace.js");
const { KBLS, EXT_DIR, kblsAvailable } = require("../helpers/repo.js");

const NOTE_COUNT = Object.keys(NOTES).length;

const { inFakeHost, waitFor } = require("../helpers/extensionHost.js");
const skip = kblsAvailable() ? false : `${KBLS} is missing (make venv)`;

test("the bundled extension in a fake VS Code host, against the real server", { skip, timeout: 240000 }, async (t) => {
  const ws = makeWorkspace("kbls-ext-");
  const { host, ext, context } = inFakeHost(t, {
    folders: [ws],
    settings: { "kbls.serverPath": KBLS, "kbls.search.debounceMs": 20, "kbls.trace.server": "off" },
  });
  const statusText = () => host.statusItems[0]?.text ?? "";
  const statusSeen = [];
  host.events.on("status", (s) => statusSeen.push(s));
  const failWith = (e) => {
    throw new Error(`${e.message}\nstatus bar: ${statusText()}\nmessages: ${JSON.stringify(host.messages)}\noutput:\n${host.output.join("").slice(-3000)}`);
  };

  // Once activation fails, the other steps would only wait for their own timeouts: skip them.
  let activated = false;
  const step = (name, fn) => t.test(name, { skip: activated ? false : "activation did not reach the note count" }, fn);

  await t.test("activation starts kbls serve and the status bar reaches the note count", async () => {
    await ext.activate(context);
    assert.ok(host.commands.has("kbls.search"));
    for (const id of ["kbls.related", "kbls.reindex", "kbls.showStatus", "kbls.restartServer"]) assert.ok(host.commands.has(id), id);
    assert.equal(host.statusItems.length, 1);
    assert.equal(host.statusItems[0].command, "kbls.showStatus");
    await waitFor(`"KB: ${NOTE_COUNT} notes"`, () => statusText().includes(`KB: ${NOTE_COUNT} notes`)).catch(failWith);
    assert.equal(statusSeen[0], "$(sync~spin) KB: starting");
    assert.ok(host.output.join("").includes(`Starting: ${KBLS} serve`), "the command line is logged");
    t.diagnostic(`status bar went through: ${[...new Set(statusSeen)].join(" → ")}`);
    activated = true;
  });

  await step("KB: Search queries as you type, one row per note; Enter puts the cursor at the hit's first line", async () => {
    const done = host.commands.get("kbls.search")();
    const qp = host.quickPicks.at(-1);
    assert.equal(qp.title, "KB: Search");
    assert.equal(qp.matchOnDescription, false);
    assert.equal(qp.matchOnDetail, false);
    for (const v of ["who", "who owns", "who owns the heap data after a move"]) qp.type(v);
    const items = await waitFor("search results", () => (qp.items[0]?.hit ? qp.items : null)).catch(failWith);
    assert.equal(items[0].label, "Ownership in Rust");
    assert.match(items[0].description, /rust\/ownership\.md/);
    assert.ok(items.every((i) => i.alwaysShow), "the server ranks: nothing is filtered out");
    assert.equal(items[0].buttons.at(-1).tooltip, "Open to the Side");
    const notes = items.filter((i) => i.expands === undefined).map((i) => i.hit.path);
    assert.equal(new Set(notes).size, notes.length, `one row per note: ${JSON.stringify(notes)}`);
    const hit = items[0].hit;
    qp.accept(items[0]);
    const editor = await waitFor("the editor", () => host.openedEditors.at(-1));
    await done;
    assert.equal(editor.document.uri.fsPath, path.join(ws, "rust/ownership.md"));
    assert.ok(editor.selection instanceof Selection);
    assert.ok(editor.selection.isEmpty, "nothing selected: the next key types, it does not replace the section");
    assert.equal(editor.selection.active.line, hit.range.start.line, "cursor on the chunk's first line");
    assert.equal(editor.selection.active.character, 0);
    assert.equal(editor.revealed.length, 1);
    assert.equal(editor.revealed[0].type, host.vscode.TextEditorRevealType.AtTop, "its first line at the top");
    const moves = lineOf("rust/ownership.md", /After a move/);
    assert.ok(hit.range.start.line <= moves && moves < hit.range.end.line, "the hit is the section about moves");
  });

  await step("the item button opens the hit to the side and keeps the picker", async () => {
    const done = host.commands.get("kbls.search")("tag:baking feeding the starter");
    const qp = host.quickPicks.at(-1);
    assert.equal(qp.value, "tag:baking feeding the starter", "an initial query argument is searched at once");
    const items = await waitFor("results", () => (qp.items[0]?.hit ? qp.items : null)).catch(failWith);
    for (const i of items) assert.equal(i.hit.path, "baking/sourdough.md", "query syntax reaches the server");
    const before = host.openedEditors.length;
    qp.clickItemButton(items[0], items[0].buttons[0]);
    const editor = await waitFor("the side editor", () => host.openedEditors[before]);
    assert.equal(editor.options.viewColumn, host.vscode.ViewColumn.Beside);
    assert.equal(qp.visible, true);
    qp.hide();
    await done;
  });

  await step("KB: Related Notes for the active editor lists other notes with reasons", async () => {
    const doc = await host.vscode.workspace.openTextDocument(host.vscode.Uri.file(path.join(ws, "rust/borrowing.md")));
    const editor = await host.vscode.window.showTextDocument(doc);
    editor.selection = new Selection(new Position(10, 0), new Position(10, 0));
    const done = host.commands.get("kbls.related")();
    const qp = host.quickPicks.at(-1);
    assert.match(qp.title, /Related Notes — borrowing\.md \(line 11\)/);
    const items = await waitFor("related notes", () => (qp.items[0]?.hit ? qp.items : null)).catch(failWith);
    assert.ok(items.every((i) => i.hit.path !== "rust/borrowing.md"));
    assert.equal(items[0].hit.path, "rust/ownership.md");
    assert.ok(items[0].detail.length > 0);
    assert.ok(items.every((i) => i.alwaysShow === false) && qp.matchOnDescription, "typing narrows the related notes");
    qp.hide();
    await done;
  });

  await step("hover through the language client: on a heading and a link, in prose only with kbls.hover.prose", async () => {
    const doc = host.textDocuments.find((d) => d.uri.fsPath.endsWith("borrowing.md"));
    const { provider } = host.hoverProviders[0] ?? {};
    assert.ok(provider, "the client registered a hover provider");
    const token = new host.vscode.CancellationTokenSource().token;
    const markdown = (hover) => hover.contents.map((c) => c.value ?? String(c)).join("\n");
    const heading = lineOf("rust/borrowing.md", /^## Mutable references/);
    const hover = await provider.provideHover(doc, new Position(heading, 5), token);
    assert.ok(hover, "a hover on the heading");
    assert.match(markdown(hover), /- \d\.\d\d \[Ownership in Rust\]\(file:\/\/[^)]*ownership\.md#L\d+\)/, markdown(hover));
    const link = lineOf("rust/borrowing.md", /See \[Ownership\]/);
    const onLink = await provider.provideHover(doc, new Position(link, doc.lineAt(link).text.indexOf("[Ownership]") + 3), token);
    assert.ok(onLink, "a hover on the link");
    assert.match(markdown(onLink), /^\*\*Links to\*\* \[Ownership in Rust\]\(file:\/\/[^)]*ownership\.md\)/, markdown(onLink));
    const prose = lineOf("rust/borrowing.md", /mutable reference to a particular/);
    assert.ok(!(await provider.provideHover(doc, new Position(prose, 12), token)), "no hover in prose by default");
    host.settings["kbls.hover"] = { enabled: true, prose: true };
    try {
      const inProse = await provider.provideHover(doc, new Position(prose, 12), token);
      assert.ok(inProse, "kbls.hover.prose: the hover in prose too (read by the server through workspace/configuration)");
    } finally {
      delete host.settings["kbls.hover"];
    }

    // kbls.hover.enabled: false keeps the hover away without restarting anything.
    host.settings["kbls.hover.enabled"] = false;
    try {
      assert.equal(await provider.provideHover(doc, new Position(heading, 5), token), undefined, "no hover when disabled");
    } finally {
      delete host.settings["kbls.hover.enabled"];
    }
    assert.ok(await provider.provideHover(doc, new Position(heading, 5), token), "the hover is back");
  });

  await step("KB: Show Status renders kb/status into a read-only markdown document", async () => {
    await host.commands.get("kbls.showStatus")();
    const editor = host.openedEditors.at(-1);
    assert.equal(editor.document.uri.scheme, "kbls-status");
    const text = editor.document.getText();
    assert.match(text, new RegExp(`\\*\\*Indexed:\\*\\* ${NOTE_COUNT} notes`));
    assert.match(text, new RegExp(`## ${ws.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  });

  await step("KB: Reindex Workspace reports how many files were queued", async () => {
    await host.commands.get("kbls.reindex")();
    const msg = host.messages.find((m) => /KB: reindexing — \d+ files? queued/.test(m.m));
    assert.ok(msg, JSON.stringify(host.messages));
    await waitFor("the note count after reindexing", () => statusText().includes(`KB: ${NOTE_COUNT} notes`)).catch(failWith);
  });

  await step("KB: Restart Server starts a new server that answers", async () => {
    const seen = statusSeen.length;
    await host.commands.get("kbls.restartServer")();
    assert.ok(statusSeen.slice(seen).some((s) => /starting|stopped/.test(s)), "the status bar shows the restart");
    await waitFor("the note count after the restart", () => statusText().includes(`KB: ${NOTE_COUNT} notes`)).catch(failWith);
    const done = host.commands.get("kbls.search")("interactive rebase");
    const qp = host.quickPicks.at(-1);
    const items = await waitFor("results after the restart", () => (qp.items[0]?.hit ? qp.items : null)).catch(failWith);
    assert.equal(items[0].hit.path, "dev/git-rebase.md");
    qp.hide();
    await done;
  });

  await step("a wrong kbls.serverPath: one error naming the setting, with Open Setting", async () => {
    host.settings["kbls.serverPath"] = path.join(ws, "no-such-kbls");
    host.fireConfigChange(["kbls.serverPath"]);
    const msg = await waitFor("the error", () => host.messages.find((m) => m.level === "error" && /kbls\.serverPath/.test(m.m)));
    assert.deepEqual(msg.items, ["Open Setting", "Show Output"], "installing would not fix a wrong setting");
    await waitFor("KB: no server", () => statusText().includes("KB: no server"));
    assert.equal(host.messages.filter((m) => m.level === "error").length, 1, "one message, not one per attempt");
    host.settings["kbls.serverPath"] = KBLS;
    host.fireConfigChange(["kbls.serverPath"]);
    await waitFor("the server back", () => statusText().includes(`KB: ${NOTE_COUNT} notes`)).catch(failWith);
  });

  await step("nothing found at all: an information prompt, install first, naming commands that work", async () => {
    const savedPath = process.env.PATH;
    host.settings["kbls.serverPath"] = "";
    process.env.PATH = path.join(ws, "empty-bin");
    try {
      host.fireConfigChange(["kbls.serverPath"]);
      const msg = await waitFor("the not-installed prompt", () =>
        host.messages.find((m) => m.level === "info" && /not installed yet/.test(m.m)),
      );
      assert.deepEqual(msg.items, ["Install kbls server", "Open Setting", "Show Output"]);
      assert.ok(!host.messages.some((m) => m.level === "error" && /not installed yet/.test(m.m)), "not an error");
      assert.doesNotMatch(msg.m, /(uv tool|pipx) install kbls\b/, "kbls is not on the package index");
      assert.match(msg.m, /`uv tool install \S+\/server\/kbls-[\d.]+-py3-none-any\.whl`|from a clone of kbls, `uv tool install \.\/`/);
      assert.match(msg.m, /kbls\.serverPath/);
      // KB: Search now repeats the message instead of opening a picker that cannot answer.
      const pickers = host.quickPicks.length;
      const prompts = host.messages.filter((m) => m.level === "info" && /not installed yet/.test(m.m)).length;
      await host.commands.get("kbls.search")();
      assert.equal(host.quickPicks.length, pickers);
      assert.equal(host.messages.filter((m) => m.level === "info" && /not installed yet/.test(m.m)).length, prompts + 1);
    } finally {
      process.env.PATH = savedPath;
      host.settings["kbls.serverPath"] = KBLS;
    }
  });
});

test("multi-root: one server indexes every folder and search merges them", { skip, timeout: 180000 }, async (t) => {
  const a = makeWorkspace("kbls-ext-a-");
  const b = makeWorkspace("kbls-ext-b-");
  // Folder b keeps only the travel note, folder a everything but it.
  fs.rmSync(path.join(a, "travel"), { recursive: true, force: true });
  for (const d of ["rust", "baking", "dev"]) fs.rmSync(path.join(b, d), { recursive: true, force: true });
  const { host, ext, context } = inFakeHost(t, { folders: [a, b], settings: { "kbls.serverPath": KBLS, "kbls.search.debounceMs": 20 } });
  await ext.activate(context);
  const statusText = () => host.statusItems[0]?.text ?? "";
  await waitFor(`"KB: ${NOTE_COUNT} notes" over both folders`, () => statusText().includes(`KB: ${NOTE_COUNT} notes`)).catch((e) => {
    throw new Error(`${e.message}; status: ${statusText()}; output: ${host.output.join("").slice(-2000)}`);
  });
  const done = host.commands.get("kbls.search")("bamboo grove temples");
  const qp = host.quickPicks.at(-1);
  const items = await waitFor("results", () => (qp.items[0]?.hit ? qp.items : null));
  assert.equal(items[0].hit.path, "travel/kyoto.md");
  assert.equal(items[0].hit.root.replace(/\/$/, ""), pathToFileURL(b).href.replace(/\/$/, ""), "the hit comes from the second folder");
  qp.hide();
  await done;
  await host.commands.get("kbls.showStatus")();
  const text = host.openedEditors.at(-1).document.getText();
  assert.match(text, /in 2 roots/);
});
