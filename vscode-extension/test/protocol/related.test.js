// The Related Notes view, the selection commands and the link features, against the real
// `kbls serve`: first the view's data straight from kb/related (each section of a diary of two
// topics gets its topic's note), then the bundled extension in the fake VS Code host: the view
// follows the cursor between sections (and asks nothing while it stays in one), a row opens its
// note and inserts a link, KB: Search Selection / KB: Notes Like This, and completion, definition
// and document links through the real vscode-languageclient.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { pathToFileURL } = require("node:url");
const kb = require("../../out/protocol.js");
const { relatedRows, linkText } = require("../../out/relatedItems.js");
const { Position, Selection } = require("../helpers/fake-vscode.js");
const { makeWorkspace, lineOf, DIARY } = require("../helpers/workspace.js");
const { startServer, sender } = require("../helpers/server.js");
const { KBLS, kblsAvailable } = require("../helpers/repo.js");
const { inFakeHost, waitFor } = require("../helpers/extensionHost.js");

const skip = kblsAvailable() ? false : `${KBLS} is missing (make venv)`;
const MONDAY = lineOf(DIARY.path, /starter in the jar/);
const TUESDAY = lineOf(DIARY.path, /bullet train/);

test("kb/related at the cursor's line answers for its section (the view's data)", { skip, timeout: 180000 }, async (t) => {
  const ws = makeWorkspace("kbls-related-", { diary: true });
  const server = await startServer(ws);
  t.after(async () => {
    await server.close();
    fs.rmSync(ws, { recursive: true, force: true });
  });
  await server.waitIndexed(6);
  const conn = sender(server.conn);
  const uri = pathToFileURL(path.join(ws, DIARY.path)).href;
  const ask = (line) => kb.related(conn, kb.relatedParams(uri, { line, character: 3 }, 10));

  const monday = await ask(MONDAY);
  const tuesday = await ask(TUESDAY);
  assert.equal(monday.hits[0]?.path, "baking/sourdough.md", JSON.stringify(monday.hits.map((h) => h.path)));
  assert.equal(tuesday.hits[0]?.path, "travel/kyoto.md", JSON.stringify(tuesday.hits.map((h) => h.path)));
  for (const h of [...monday.hits, ...tuesday.hits]) assert.notEqual(h.path, DIARY.path, "never the note itself");

  const rows = relatedRows(tuesday.hits);
  assert.match(rows[0].label, /^\d\.\d\d · Kyoto trip$/, "the score first, then the title");
  assert.match(rows[0].description, /^(§ Getting around|similar)$/, rows[0].description);
  assert.match(rows[0].tooltip, /similar (to § |in meaning)/);
  assert.doesNotMatch(rows[0].tooltip, /similar to § Kyoto trip|\(0\.\d\d\)/, "no reason repeats the title or the score");
  assert.equal(linkText(rows[0].hit, uri, "markdown"), "[Kyoto trip](../travel/kyoto.md)");
  assert.equal(linkText(rows[0].hit, uri, "wiki"), "[[travel/kyoto|Kyoto trip]]");
  // Any line of a section gets that section's answer.
  const again = await ask(TUESDAY + 1);
  assert.deepEqual(again.hits.map((h) => h.path), tuesday.hits.map((h) => h.path));
});

test("the bundled extension: Related Notes view, selection commands and link features", { skip, timeout: 240000 }, async (t) => {
  const ws = makeWorkspace("kbls-view-", { diary: true });
  const draft = "journal/draft.md";
  const draftText = "# Draft\n\nFeeding the jar of wild yeast with flour and water every morning keeps it lively. See [[\n\nBack to [[borrowing]] and [kyoto](../travel/kyoto.md).\n";
  fs.writeFileSync(path.join(ws, draft), draftText);
  const { host, ext, context } = inFakeHost(t, {
    folders: [ws],
    settings: { "kbls.serverPath": KBLS, "kbls.trace.server": "messages", "kbls.related.debounceMs": 300 },
  });
  const relatedSent = () => host.output.join("").split("Sending request 'kb/related").length - 1;
  const failWith = (e) => {
    throw new Error(`${e.message}\nmessages: ${JSON.stringify(host.messages)}\noutput:\n${host.output.join("").slice(-3000)}`);
  };

  await ext.activate(context);
  await waitFor('"KB: 7 notes"', () => (host.statusItems[0]?.text ?? "").includes("KB: 7 notes"), 120000).catch(failWith);
  const view = host.treeViews.get("kbls.relatedNotes");
  assert.ok(view, "the Related Notes tree view is created");
  const rows = async () => (await view.items()).map((i) => ({ label: i.label, description: i.description, command: i.command, context: i.contextValue }));

  const doc = await host.vscode.workspace.openTextDocument(host.vscode.Uri.file(path.join(ws, DIARY.path)));
  const editor = await host.vscode.window.showTextDocument(doc);

  await t.test("the view lists the section's note and follows the cursor to the next section", async () => {
    host.moveCursor(editor, MONDAY, 4);
    const first = await waitFor("Sourdough bread in the view", async () => (/ · Sourdough bread$/.test((await rows())[0]?.label ?? "") ? rows() : null), 30000).catch(failWith);
    assert.match(first[0].label, /^\d\.\d\d · Sourdough bread$/);
    assert.match(first[0].description, /^(§ [^·]+|similar)$/);
    assert.equal(first[0].context, "kbls.relatedNote");
    assert.equal(first[0].command.command, "kbls.openRelatedNote");
    assert.equal(view.description, "diary.md › Monday");
    assert.equal(view.message, undefined);

    // Moving within the section asks nothing more.
    const sent = relatedSent();
    host.moveCursor(editor, MONDAY + 1, 0);
    host.moveCursor(editor, MONDAY + 2, 7);
    await new Promise((r) => setTimeout(r, 900));
    assert.equal(relatedSent(), sent, "no kb/related while the cursor stays in the section");

    host.moveCursor(editor, TUESDAY, 2);
    const second = await waitFor("Kyoto trip in the view", async () => (/ · Kyoto trip$/.test((await rows())[0]?.label ?? "") ? rows() : null), 30000).catch(failWith);
    assert.ok(!second.some((r) => / · Diary$/.test(r.label)), "never the note itself");
    assert.equal(view.description, "diary.md › Tuesday");
    assert.equal(relatedSent(), sent + 1, "one request for the new section");
  });

  await t.test("Insert link here writes a relative link at the cursor of the note", async () => {
    const [row] = await view.provider.getChildren();
    host.moveCursor(editor, TUESDAY, 5);
    await host.commands.get("kbls.insertRelatedLink")(row);
    const edit = host.edits.at(-1);
    assert.equal(edit.editor.document.uri.fsPath, path.join(ws, DIARY.path));
    assert.deepEqual(edit.inserts, [{ position: new Position(TUESDAY, 5), text: "[Kyoto trip](../travel/kyoto.md)" }]);
    host.settings["kbls.related.linkStyle"] = "wiki";
    await host.commands.get("kbls.insertRelatedLink")(row);
    assert.equal(host.edits.at(-1).inserts[0].text, "[[travel/kyoto|Kyoto trip]]");
    delete host.settings["kbls.related.linkStyle"];
  });

  await t.test("a row's click opens its note at the related section", async () => {
    const [row] = await view.provider.getChildren();
    await host.commands.get("kbls.openRelatedNote")(row);
    const opened = host.openedEditors.at(-1);
    assert.equal(opened.document.uri.fsPath, path.join(ws, "travel/kyoto.md"));
    assert.equal(opened.selection.active.line, row.hit.range.start.line);
    assert.ok(opened.selection.isEmpty, "the cursor at the section's first line, nothing selected (issue 19 item 8)");
  });

  await t.test("KB: Search Selection opens KB: Search with the selection; KB: Notes Like This lists the notes near its meaning", async () => {
    const diary = await host.vscode.window.showTextDocument(doc);
    diary.selection = new Selection(new Position(MONDAY, 0), new Position(MONDAY + 1, 0));
    const searching = host.commands.get("kbls.searchSelection")();
    const qp = await waitFor("the search picker", () => host.quickPicks.find((q) => q.title.startsWith("KB: Search") && q.visible));
    assert.equal(qp.value, doc.getText(diary.selection).replace(/\s+/g, " ").trim());
    await waitFor("search results", () => (qp.items[0]?.hit ? qp.items : null)).catch(failWith);
    qp.hide();
    await searching;

    diary.selection = new Selection(new Position(TUESDAY, 0), new Position(TUESDAY + 2, 0));
    const liking = host.commands.get("kbls.notesLikeThis")();
    const like = host.quickPicks.at(-1);
    assert.match(like.title, /^KB: Notes Like This — "Booked the bullet train/);
    const items = await waitFor("notes like this", () => (like.items[0]?.hit ? like.items : null)).catch(failWith);
    assert.equal(items[0].hit.path, "travel/kyoto.md");
    assert.ok(items.every((i) => i.hit.path !== DIARY.path), "the note itself is left out");
    like.hide();
    await liking;
  });

  await t.test("completion after [[, definition and document links reach the server through the language client", async () => {
    const token = new host.vscode.CancellationTokenSource().token;
    const draftDoc = await host.vscode.workspace.openTextDocument(host.vscode.Uri.file(path.join(ws, draft)));
    const lines = draftText.split("\n");
    const { provider, triggerCharacters, selector } = host.completionProviders[0] ?? {};
    assert.ok(provider, "the client registered a completion provider");
    assert.deepEqual([...triggerCharacters].sort(), ["#", "(", "["]);
    assert.ok(JSON.stringify(selector).includes("markdown"), JSON.stringify(selector));
    const line = lines.findIndex((l) => l.endsWith("See [["));
    const result = await waitFor(
      "completion items",
      async () => {
        const r = await provider.provideCompletionItems(draftDoc, new Position(line, lines[line].length), token, { triggerKind: 1, triggerCharacter: "[" });
        const items = Array.isArray(r) ? r : r?.items;
        return items?.length ? items : null;
      },
      30000,
      500,
    ).catch(failWith);
    assert.equal(result[0].label, "Sourdough bread", JSON.stringify(result.map((i) => i.label)));
    const edit = result[0].textEdit?.newText ?? result[0].insertText?.value ?? result[0].insertText;
    assert.match(String(edit), /^.*\]\]$/, `a wiki link is inserted: ${edit}`);

    const linkLine = lines.findIndex((l) => l.startsWith("Back to [[borrowing]]"));
    const def = await host.definitionProviders[0].provider.provideDefinition(draftDoc, new Position(linkLine, 12), token);
    const targets = (Array.isArray(def) ? def : [def]).map((d) => (d.uri ?? d.targetUri).fsPath);
    assert.deepEqual(targets, [path.join(ws, "rust/borrowing.md")]);
    const links = await host.documentLinkProviders[0].provider.provideDocumentLinks(draftDoc, token);
    const linked = links.map((l) => l.target.fsPath).sort();
    assert.deepEqual(linked, [path.join(ws, "rust/borrowing.md"), path.join(ws, "travel/kyoto.md")]);
  });
});
