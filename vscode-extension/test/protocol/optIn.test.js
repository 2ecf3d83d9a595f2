// Opt-in indexing with the bundled extension in the fake host and the real server: a folder
// without .kbls.yaml starts no server until the user agrees; each answer is remembered; KB:
// Enable for this folder writes a .kbls.yaml; in a multi-root workspace only enabled folders
// are indexed.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { createHost, installVscode } = require("../helpers/fake-vscode.js");
const { makeWorkspace, NOTES } = require("../helpers/workspace.js");
const { KBLS, kblsAvailable } = require("../helpers/repo.js");
const { serversSpawned, spawned, killSpawned, memento, makeContext, loadExtension, disposeAll, waitFor } = require("../helpers/extensionHost.js");

const NOTE_COUNT = Object.keys(NOTES).length;
const QUESTION = /^Index the notes in this folder with kbls\?/;
const skip = kblsAvailable() ? false : `${KBLS} is missing (make venv)`;
const settings = { "kbls.serverPath": KBLS, "kbls.search.debounceMs": 20 };

/** A notes folder without .kbls.yaml, with a README at its root. */
function plainFolder(prefix) {
  const ws = makeWorkspace(prefix);
  fs.rmSync(path.join(ws, ".kbls.yaml"));
  fs.writeFileSync(path.join(ws, "README.md"), "# A project\n\nSome code and a few notes.\n");
  return ws;
}

/** Activates the extension in a fresh fake host; `answer` picks the reply to the question. */
async function session(t, folders, { globalState, answer } = {}) {
  const host = createHost({ workspaceFolders: folders, settings });
  const uninstall = installVscode(host);
  const ext = loadExtension();
  const context = makeContext(host, { globalState });
  host.respond = (level, m, items) => (QUESTION.test(m) ? answer?.(items) : undefined);
  const from = spawned.length;
  t.after(async () => {
    await disposeAll(ext, context);
    uninstall();
  });
  await ext.activate(context);
  const open = (rel, folder = folders[0]) => host.vscode.workspace.openTextDocument(host.vscode.Uri.file(path.join(folder, rel)));
  const questions = () => host.messages.filter((m) => QUESTION.test(m.m));
  const statusText = () => host.statusItems[0]?.text ?? "";
  /** Waits for the status bar to show `text`; on timeout the error carries the status and the log. */
  const waitStatus = (text, ms = 120000) =>
    waitFor(`"${text}"`, () => statusText().includes(text), ms).catch((e) => {
      throw new Error(`${e.message}; status bar: ${statusText()}; output:\n${host.output.join("").slice(-3000)}`);
    });
  return { host, context, open, questions, statusText, waitStatus, servers: () => serversSpawned(from) };
}

test("a folder without .kbls.yaml: no server until the user agrees", { skip, timeout: 240000 }, async (t) => {
  const ws = plainFolder("kbls-optin-");
  const state = memento();
  t.after(() => {
    killSpawned();
    fs.rmSync(ws, { recursive: true, force: true });
  });

  await t.test("activation alone asks nothing and starts nothing", async (t) => {
    const s = await session(t, [ws], { globalState: state, answer: () => "Not now" });
    assert.equal(s.questions().length, 0);
    assert.equal(s.servers().length, 0);
    // Opening the README asks once; "Not now" starts nothing, and a second note does not ask again.
    await s.open("README.md");
    await waitFor("the question", () => s.questions().length === 1);
    assert.deepEqual(s.questions()[0].items, ["Yes", "Not now", "Never for this folder"]);
    await s.open("rust/ownership.md");
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(s.questions().length, 1, "asked once per folder and session");
    assert.equal(s.servers().length, 0, "no server after Not now");
    assert.equal(fs.existsSync(path.join(ws, ".kbls.yaml")), false);
    // A KB: command outside an enabled folder offers to enable it rather than starting a server.
    await s.host.commands.get("kbls.search")();
    assert.ok(s.host.messages.some((m) => /not enabled for this folder/.test(m.m) && m.items.includes("Enable for this folder")));
    assert.equal(s.host.quickPicks.length, 0);
    assert.equal(s.servers().length, 0);
  });

  await t.test("a new session asks again; Yes starts the server, which indexes the folder", async (t) => {
    const s = await session(t, [ws], { globalState: state, answer: () => "Yes" });
    await s.open("README.md");
    await waitFor("the question", () => s.questions().length === 1);
    await s.waitStatus(`KB: ${NOTE_COUNT + 1} notes`);
    assert.equal(s.servers().length, 1);
    assert.equal(fs.existsSync(path.join(ws, ".kbls.yaml")), false, "Yes is remembered by the extension, not written into the folder");
  });

  await t.test("the yes is remembered: the next session starts without asking", async (t) => {
    const s = await session(t, [ws], { globalState: state, answer: () => assert.fail("asked again") });
    await waitFor("the server", () => s.servers().length === 1, 30000);
    await s.open("README.md");
    await s.waitStatus(`KB: ${NOTE_COUNT + 1} notes`);
    assert.equal(s.questions().length, 0);
  });
});

test("Never for this folder is remembered; KB: Enable for this folder writes .kbls.yaml and starts", { skip, timeout: 240000 }, async (t) => {
  const ws = plainFolder("kbls-optin-never-");
  const state = memento();
  t.after(() => {
    killSpawned();
    fs.rmSync(ws, { recursive: true, force: true });
  });
  await t.test("Never: no server, and no question in the next session", async (t) => {
    const s = await session(t, [ws], { globalState: state, answer: () => "Never for this folder" });
    await s.open("README.md");
    await waitFor("the question", () => s.questions().length === 1);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(s.servers().length, 0);
  });
  await t.test("next session: silent; the palette command enables the folder", async (t) => {
    const s = await session(t, [ws], { globalState: state, answer: () => assert.fail("asked after Never") });
    await s.open("README.md");
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(s.questions().length, 0);
    assert.equal(s.servers().length, 0);
    await s.host.commands.get("kbls.enableFolder")();
    const yaml = fs.readFileSync(path.join(ws, ".kbls.yaml"), "utf8");
    assert.match(yaml, /^# kbls indexes the notes under this folder/);
    await s.waitStatus(`KB: ${NOTE_COUNT + 1} notes`);
    assert.equal(s.servers().length, 1);
  });
});

test("multi-root: only the enabled folder is indexed, the other is not even told to the server", { skip, timeout: 240000 }, async (t) => {
  const notes = makeWorkspace("kbls-optin-notes-");
  const code = plainFolder("kbls-optin-code-");
  t.after(() => {
    killSpawned();
    fs.rmSync(notes, { recursive: true, force: true });
    fs.rmSync(code, { recursive: true, force: true });
  });
  // In a subtest, so that the extension stops its server before the outer hook ends the processes.
  await t.test("one server, one root", async (t) => {
    const s = await session(t, [notes, code], { answer: () => "Not now" });
    await s.waitStatus(`KB: ${NOTE_COUNT} notes`);
    await s.open("README.md", code);
    await waitFor("the question for the second folder", () => s.questions().length === 1);
    assert.match(s.questions()[0].m, /\(kbls-optin-code-/, "the question names the folder in a multi-root workspace");
    await s.host.commands.get("kbls.showStatus")();
    const text = s.host.openedEditors.at(-1).document.getText();
    assert.match(text, /in 1 root/, text);
    assert.ok(!text.includes(code), "the code folder is not a root of the server");
  });
});
