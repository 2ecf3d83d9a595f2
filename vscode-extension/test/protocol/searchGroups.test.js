// KB: Search grouped by note (issue 19 item 5), with the bundled extension in the fake host and the
// real `kbls serve`: a long note of many matching sections shows once, with a "+N more sections"
// row that lists them in place; each section row opens at its own line, nothing selected.
// `kbls.search.groupByNote: false` brings back a row per section.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { makeWorkspace, UNDO } = require("../helpers/workspace.js");
const { KBLS, kblsAvailable } = require("../helpers/repo.js");
const { inFakeHost, waitFor } = require("../helpers/extensionHost.js");

const skip = kblsAvailable() ? false : `${KBLS} is missing (make venv)`;
const QUERY = UNDO.query;
test("KB: Search shows one row per note and expands a note's other sections in place", { skip, timeout: 240000 }, async (t) => {
  const ws = makeWorkspace("kbls-groups-");
  fs.mkdirSync(path.join(ws, "dev"), { recursive: true });
  fs.writeFileSync(path.join(ws, UNDO.path), UNDO.text);
  const { host, ext, context } = inFakeHost(t, {
    folders: [ws],
    // The Related Notes view is not under test: it asks nothing while this test runs (its request
    // for the note opened below would still be on its way when the host is disposed).
    settings: { "kbls.serverPath": KBLS, "kbls.search.debounceMs": 20, "kbls.related.debounceMs": 5000 },
  });
  const failWith = (e) => {
    throw new Error(`${e.message}\nmessages: ${JSON.stringify(host.messages)}\noutput:\n${host.output.join("").slice(-3000)}`);
  };
  await ext.activate(context);
  await waitFor('"KB: 6 notes"', () => (host.statusItems[0]?.text ?? "").includes("KB: 6 notes"), 120000).catch(failWith);

  const search = async () => {
    const done = host.commands.get("kbls.search")();
    const qp = host.quickPicks.at(-1);
    qp.type(QUERY);
    const items = await waitFor("search results", () => (qp.items[0]?.hit ? qp.items : null)).catch(failWith);
    return { done, qp, items };
  };

  await t.test("one row per note; the undo note's other sections behind one row that names them", async () => {
    const { done, qp, items } = await search();
    assert.equal(items[0].label, "Git undo recipes");
    // typed, the answer leaves the sections' snippets out (shown only once a note is expanded)
    assert.ok(items[0].hit.sections.length >= 2 && items[0].hit.sections.every((s) => s.snippet === ""), JSON.stringify(items[0].hit.sections));
    const notes = items.filter((i) => i.expands === undefined).map((i) => i.hit.path);
    assert.equal(new Set(notes).size, notes.length, `one row per note: ${JSON.stringify(notes)}`);
    const more = items[1];
    assert.match(more.label, /^\$\(unfold\) \+\d+ more sections?$/, more.label);
    assert.equal(more.expands, items[0].hit.uri);
    assert.match(more.description, /Undo /, more.description);
    assert.deepEqual(items[0].buttons.map((b) => b.tooltip), ["Show the Other Sections", "Open to the Side"]);

    // Enter on "+N more sections" lists them in place; the picker stays open.
    const opened = host.openedEditors.length;
    qp.accept(more);
    assert.equal(qp.visible, true, "the picker stays open");
    assert.equal(host.openedEditors.length, opened, "nothing opened");
    const rows = qp.items;
    const sections = rows.slice(1, 1 + items[0].hit.sections.length);
    assert.ok(sections.length >= 2, JSON.stringify(rows.map((r) => r.label)));
    assert.ok(sections.every((r) => r.label.startsWith("$(indent) § Undo ")), JSON.stringify(sections.map((r) => r.label)));
    assert.equal(qp.activeItems[0], sections[0], "the cursor on the first listed section");
    assert.ok(!rows.some((r) => r.expands !== undefined && r.expands === items[0].hit.uri), "the row that expanded is gone");
    // their snippets come with a second answer to the same query; the cursor stays where it was
    const filled = await waitFor("the sections' snippets", () => {
      const listed = qp.items.slice(1, 1 + items[0].hit.sections.length);
      return listed.every((r) => r.detail) ? listed : null;
    }).catch(failWith);
    assert.deepEqual(filled.map((r) => r.label), sections.map((r) => r.label));
    assert.ok(filled.some((r) => /amend/i.test(r.detail)), JSON.stringify(filled.map((r) => r.detail)));
    assert.equal(qp.activeItems[0].label, sections[0].label, "the cursor on the first listed section still");
    assert.equal(qp.activeItems[0].range.start.line, sections[0].range.start.line);

    // A section row opens the note at that section's first line, nothing selected.
    const pick = filled[1];
    qp.accept(pick);
    const editor = await waitFor("the editor", () => host.openedEditors[opened]);
    await done;
    assert.equal(editor.document.uri.fsPath, path.join(ws, UNDO.path));
    assert.equal(editor.selection.active.line, pick.range.start.line);
    assert.notEqual(pick.range.start.line, items[0].range.start.line, "another section than the note's best");
    assert.match(editor.document.lineAt(pick.range.start.line).text, /^## Undo /);
    assert.ok(editor.selection.isEmpty);
  });

  await t.test("the unfold button of the note's row expands it too", async () => {
    const { done, qp, items } = await search();
    qp.clickItemButton(items[0], items[0].buttons[0]);
    assert.ok(qp.items[1].label.startsWith("$(indent) § "), qp.items[1].label);
    qp.hide();
    await done;
  });

  await t.test("kbls.search.groupByNote: false brings back a row per section", async () => {
    host.settings["kbls.search.groupByNote"] = false;
    try {
      const { done, qp, items } = await search();
      const undo = items.filter((i) => i.hit.path === UNDO.path);
      assert.ok(undo.length >= 2, `the note's sections each a row: ${JSON.stringify(items.map((i) => i.label))}`);
      assert.ok(items.every((i) => i.expands === undefined));
      qp.hide();
      await done;
    } finally {
      delete host.settings["kbls.search.groupByNote"];
    }
  });
});
