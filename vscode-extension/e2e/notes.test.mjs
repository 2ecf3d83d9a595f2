// End to end in code-server: the note features the server gives through VS Code's own UI, on the
// sample workspace plus a journal note (in a folder with a space and an accent) with a broken
// link: its diagnostic (squiggle and Problems view), the "did you mean" quick fix by Ctrl+.,
// and the outline by Go to Symbol in Editor (Ctrl+Shift+O): VS Code's markdown extension gives
// it, and the client leaves kbls's out, so each heading shows once.
// Inputs (set by run-tests.sh): CODE_SERVER, VSIX, CHROMIUM (see workbench.mjs), KBLS_BIN.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { sleep, until, toolchainMissing, startSession, statusBarTexts, activeEditorText, stableRows, openFile, quickInputFocused } from "./workbench.mjs";

const require = createRequire(import.meta.url);
const { makeWorkspace } = require("../test/helpers/workspace.js");
const { KBLS } = require("../test/helpers/repo.js");

const JOURNAL = "journal été/summer.md";
const TEXT = `# Summer journal

Tonight I bake [[Sourdugh bread]] with a dark crust from the dutch oven.

## Evening

Read about the [[Kyoto trip]] again.
`;
const skipReason = toolchainMissing() || (!fs.existsSync(KBLS) ? `${KBLS} is missing` : false);

test("note features in a real VS Code (code-server + Chromium)", { skip: skipReason, timeout: 10 * 60000 }, async (t) => {
  const ws = makeWorkspace("kbls-notes-ws-");
  fs.mkdirSync(path.join(ws, path.dirname(JOURNAL)), { recursive: true });
  fs.writeFileSync(path.join(ws, JOURNAL), TEXT);
  t.after(() => fs.rmSync(ws, { recursive: true, force: true }));
  const session = await startSession(t, { name: "notes", ws, settings: { "kbls.serverPath": KBLS } });
  const { page, screenshot } = session;

  await t.test("the workspace is indexed", { timeout: 240000 }, async () => {
    await until('the status bar to show "KB: 6 notes"', async () => {
      const kb = (await statusBarTexts(page)).find((s) => s.includes("KB"));
      return kb && /KB: 6 notes/.test(kb) ? kb : null;
    }, 180000, 500).catch(async (e) => {
      await screenshot("index-timeout");
      throw e;
    });
  });

  await t.test("a broken link gets a squiggle and a row in the Problems view", { timeout: 120000 }, async () => {
    await openFile(page, "summer.md");
    await until("a warning squiggle in the editor", () =>
      page.evaluate(() => document.querySelectorAll(".editor-group-container.active .monaco-editor .squiggly-warning").length === 1),
    30000).catch(async (e) => {
      await screenshot("squiggle-timeout");
      throw e;
    });
    await page.keyboard.down("Control");
    await page.keyboard.down("Shift");
    await page.keyboard.press("KeyM");
    await page.keyboard.up("Shift");
    await page.keyboard.up("Control");
    const rows = await until("the problem in the Problems view", async () => {
      const texts = await page.$$eval(".markers-panel .monaco-list-row", (els) => els.map((e) => e.innerText.replace(/\s+/g, " ").trim()));
      return texts.some((r) => r.includes('No note named "Sourdugh bread"')) ? texts : null;
    }, 30000).catch(async (e) => {
      await screenshot("problems-timeout");
      throw e;
    });
    t.diagnostic(`problems: ${JSON.stringify(rows)}`);
    assert.ok(rows.some((r) => /kbls/.test(r) && /missing_note/.test(r)), JSON.stringify(rows));
    assert.ok(!rows.some((r) => r.includes("Kyoto trip")), "a link that resolves is no problem");
    await screenshot("problems");
  });

  await t.test("Ctrl+. on the link offers the notes it meant; the first rewrites it", { timeout: 120000 }, async () => {
    await openFile(page, "summer.md");
    await goTo(page, 3, "Tonight I bake [[Sour".length + 1);
    await page.keyboard.down("Control");
    await page.keyboard.press("Period");
    await page.keyboard.up("Control");
    const actions = await until("the quick fix menu", async () => {
      const texts = await page.$$eval(".action-widget .monaco-list-row", (els) => els.map((e) => e.innerText.replace(/\s+/g, " ").trim()));
      return texts.some((x) => x.startsWith("Did you mean")) ? texts : null;
    }, 30000).catch(async (e) => {
      await screenshot("quickfix-timeout");
      throw e;
    });
    t.diagnostic(`quick fixes: ${JSON.stringify(actions)}`);
    const fixes = actions.filter((x) => x.startsWith("Did you mean") || x.startsWith("Create note"));
    assert.match(fixes[0], /^Did you mean "Sourdough bread"\? \(baking\/sourdough\.md\)/, JSON.stringify(actions));
    assert.ok(fixes.some((x) => /^Create note "Sourdugh bread"/.test(x)), JSON.stringify(actions));
    await screenshot("quickfix");
    // the menu's first action (under its "Quick Fix" header) is focused: Enter applies it
    await page.keyboard.press("Enter");
    await until("the link rewritten", async () => (await activeEditorText(page)).includes("[[Sourdough bread]]"), 15000);
    await until("the squiggle gone", () =>
      page.evaluate(() => document.querySelectorAll(".editor-group-container.active .monaco-editor .squiggly-warning").length === 0),
    30000);
  });

  await t.test("Go to Symbol in Editor lists each of the note's headings once", { timeout: 60000 }, async () => {
    await openFile(page, "summer.md");
    await page.keyboard.down("Control");
    await page.keyboard.down("Shift");
    await page.keyboard.press("KeyO");
    await page.keyboard.up("Shift");
    await page.keyboard.up("Control");
    await quickInputFocused(page);
    const rows = await stableRows(page, (r) => r.some((x) => x.includes("Evening")));
    t.diagnostic(`symbols: ${JSON.stringify(rows)}`);
    // one row per heading, the first carrying the count: "# Summer journal symbols (2)"
    assert.equal(rows.length, 2, JSON.stringify(rows));
    assert.ok(/Summer journal.*symbols \(2\)/.test(rows[0]) && rows[1].includes("Evening"), JSON.stringify(rows));
    await screenshot("outline");
    await page.keyboard.press("Escape");
  });
});

/** Puts the cursor at (line, column), both 1-based, with Go to Line's `line:column`. */
async function goTo(page, line, column) {
  await page.keyboard.press("Escape");
  await page.keyboard.down("Control");
  await page.keyboard.press("KeyG");
  await page.keyboard.up("Control");
  await page.waitForSelector(".quick-input-widget .quick-input-box input", { visible: true });
  await quickInputFocused(page);
  await page.keyboard.type(`${line}:${column}`, { delay: 10 });
  await page.keyboard.press("Enter");
  await until(`the cursor at ${line}:${column}`, async () => {
    const ln = (await statusBarTexts(page)).find((s) => /Ln \d+, Col \d+/.test(s));
    return ln && new RegExp(`Ln ${line}, Col ${column}\\b`).test(ln);
  }, 10000);
  await sleep(300);
}
