// Opt-in indexing decisions (out/optIn.js): which folders are enabled, when to ask, what is remembered.
const test = require("node:test");
const assert = require("node:assert/strict");
const { OptIn, folderState, answerKey, isNoteDocument, Choices, QUESTION, MINIMAL_CONFIG } = require("../../out/optIn.js");
const { memento } = require("../helpers/extensionHost.js");

test("folderState: a .kbls.yaml or a stored yes enables; never declines; not now snoozes", () => {
  assert.equal(folderState(true, undefined, false), "enabled");
  assert.equal(folderState(true, "never", false), "enabled", "a .kbls.yaml someone wrote wins over an old never");
  assert.equal(folderState(false, "yes", false), "enabled");
  assert.equal(folderState(false, "never", false), "declined");
  assert.equal(folderState(false, undefined, true), "snoozed");
  assert.equal(folderState(false, undefined, false), "ask");
});

test("OptIn remembers yes and never across sessions, not now only for this one", async () => {
  const memory = memento();
  const configs = new Set();
  const a = { uri: "file:///notes", path: "/notes" };
  const b = { uri: "file:///code", path: "/code" };
  const c = { uri: "file:///later", path: "/later" };
  let session = new OptIn(memory, async (p) => configs.has(p));
  assert.equal(await session.state(a), "ask");
  assert.equal(await session.record(a.uri, Choices.yes), true);
  assert.equal(await session.record(b.uri, Choices.never), false);
  assert.equal(await session.record(c.uri, Choices.notNow), false);
  assert.equal(await session.state(a), "enabled");
  assert.equal(await session.state(b), "declined");
  assert.equal(await session.state(c), "snoozed");
  assert.equal(memory.get(answerKey("file:///notes/")), "yes", "a trailing slash is the same folder");
  // A new session (same globalState): yes and never stay, not now is forgotten.
  session = new OptIn(memory, async (p) => configs.has(p));
  assert.equal(await session.state(a), "enabled");
  assert.equal(await session.state(b), "declined");
  assert.equal(await session.state(c), "ask");
  // A dismissed notification counts as not now.
  assert.equal(await session.record(c.uri, undefined), false);
  assert.equal(await session.state(c), "snoozed");
  // KB: Enable for this folder overrides never; a .kbls.yaml enables whatever was answered.
  await session.enable(b.uri);
  assert.equal(await session.state(b), "enabled");
  configs.add("/later");
  assert.equal(await session.state(c), "enabled");
});

test("only markdown files on disk prompt the question; the texts users see", () => {
  assert.equal(isNoteDocument({ languageId: "markdown", uri: { scheme: "file" } }), true);
  assert.equal(isNoteDocument({ languageId: "markdown", uri: { scheme: "untitled" } }), false);
  assert.equal(isNoteDocument({ languageId: "markdown", uri: { scheme: "git" } }), false);
  assert.equal(isNoteDocument({ languageId: "python", uri: { scheme: "file" } }), false);
  assert.equal(QUESTION, "Index the notes in this folder with kbls?");
  assert.deepEqual(Object.values(Choices), ["Yes", "Not now", "Never for this folder"]);
  assert.ok(MINIMAL_CONFIG.split("\n").every((l) => l === "" || l.startsWith("#")), "comments only: the server's defaults apply");
});
