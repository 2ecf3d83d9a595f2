// End-to-end: the link features in a workspace folder whose path needs escaping in a URI (a
// space and an accent: `Notizen Über …`), on a note named with a decomposed `é`, `#` and `[`.
// VS Code sends such a note as `file:///tmp/Notizen%20%C3%9Cber…/Cafe%CC%81%20%231/…`; the server
// used to find no open document under that URI and answered null: F12 said "No definition found",
// `[[` offered nothing and no link was clickable. Here F12 on a `[[link]]` opens the note, the
// link is underlined as a document link and Ctrl+click opens it, and `[[` completes by meaning.
//
// Inputs (set by run-tests.sh): CODE_SERVER, VSIX, CHROMIUM (see workbench.mjs), KBLS_BIN.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import {
  sleep,
  until,
  toolchainMissing,
  startSession,
  waitStatus,
  runCommand,
  openFile,
  goToLine,
  typeLinkAfter,
} from "./workbench.mjs";

const require = createRequire(import.meta.url);
const { makeWorkspace, NOTES } = require("../test/helpers/workspace.js");
const { KBLS } = require("../test/helpers/repo.js");

/** The note being written: a decomposed é (e + U+0301), `#` and `[` in its path. */
const DRAFT = { dir: "Cafe\u0301 #1", name: "ideas [draft].md" };
const LINK_LINE = "Feed it first, see [[Sourdough bread]] for the loaf.";
const DRAFT_TEXT = `# Ideas\n\n${LINK_LINE}\n`;
const NOTE_COUNT = Object.keys(NOTES).length + 1;
const skipReason = toolchainMissing() || (!fs.existsSync(KBLS) ? `${KBLS} is missing` : false);

/** The active editor's tab label. */
async function activeTab(page) {
  return page.$eval(".tabs-container .tab.active", (e) => e.textContent).catch(() => "");
}

/** The text of the document links VS Code underlines in the visible editor. */
async function documentLinks(page) {
  return page.evaluate(() => {
    const editor = [...document.querySelectorAll(".editor-group-container.active .monaco-editor .view-lines")].find(
      (e) => e.getBoundingClientRect().width > 0,
    );
    return editor ? [...editor.querySelectorAll(".detected-link")].map((e) => e.textContent.replace(/\u00a0/g, " ")) : [];
  });
}

test("link features in a folder with a space and an accent (code-server + Chromium)", { skip: skipReason, timeout: 10 * 60000 }, async (t) => {
  const ws = makeWorkspace("Notizen \u00dcber ");
  t.after(() => fs.rmSync(ws, { recursive: true, force: true }));
  fs.mkdirSync(path.join(ws, DRAFT.dir));
  fs.writeFileSync(path.join(ws, DRAFT.dir, DRAFT.name), DRAFT_TEXT);

  const session = await startSession(t, { name: "e2e-odd-paths", ws, settings: { "kbls.serverPath": KBLS } });
  const { page, screenshot } = session;

  await t.test("the extension indexes the folder", { timeout: 240000 }, async () => {
    await waitStatus(page, new RegExp(`KB: ${NOTE_COUNT} notes`), 180000);
    await openFile(page, DRAFT.name);
    await screenshot("draft-open");
  });

  await t.test("F12 on a [[link]] opens the linked note", { timeout: 60000 }, async () => {
    await goToLine(page, 3);
    for (let i = 0; i < LINK_LINE.indexOf("Sourdough") + 2; i++) await page.keyboard.press("ArrowRight");
    await page.keyboard.press("F12");
    const tab = await until("sourdough.md active", async () => ((await activeTab(page)).includes("sourdough.md") ? true : null), 20000).catch(async (e) => {
      await screenshot("definition-timeout");
      throw e;
    });
    assert.ok(tab);
    await screenshot("definition-opened");
  });

  await t.test("the [[link]] is a document link and Ctrl+click opens its note", { timeout: 120000 }, async () => {
    await runCommand(page, "View: Close All Editors", screenshot);
    await openFile(page, DRAFT.name);
    const links = await until("the link underlined as a document link", async () => {
      // Other decorations (the bracket pair under the cursor) cut a link into several spans.
      const found = await documentLinks(page);
      return found.join("").includes("[[Sourdough bread]]") ? found : null;
    }, 30000).catch(async (e) => {
      await screenshot("document-link-timeout");
      throw e;
    });
    t.diagnostic(`document links: ${JSON.stringify(links)}`);
    // The link's box is read again before each click: on a loaded machine the editor may still
    // lay out (breadcrumbs, the hover) after the links first appear. Holding Ctrl over a link
    // makes VS Code mark it active; the click is made once it is, and at most three times.
    const linkBox = () => page.evaluate(() => {
      const e = [...document.querySelectorAll(".editor-group-container.active .monaco-editor .view-lines .detected-link, .editor-group-container.active .monaco-editor .view-lines .detected-link-active")].find(
        (x) => x.getBoundingClientRect().width > 0 && x.textContent.includes("bread"),
      );
      if (!e) return null;
      const r = e.getBoundingClientRect();
      return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
    });
    const active = () => page.evaluate(() => document.querySelector(".editor-group-container.active .detected-link-active") !== null);
    let opened = false;
    await page.keyboard.down("Control");
    try {
      for (let attempt = 1; attempt <= 3 && !opened; attempt++) {
        const box = await until("the link's box", linkBox, 10000);
        await page.mouse.move(box.x, box.y - 2);
        await page.mouse.move(box.x, box.y);
        const marked = await until("the link active under Ctrl", async () => ((await active()) ? true : null), 5000).catch(() => false);
        await page.mouse.click(box.x, box.y);
        opened = await until("sourdough.md active after Ctrl+click", async () => ((await activeTab(page)).includes("sourdough.md") ? true : null), 10000).catch(() => false);
        t.diagnostic(`Ctrl+click ${attempt}: link marked active ${marked}, note opened ${opened}`);
        if (!opened) await screenshot(`ctrl-click-${attempt}`);
      }
    } finally {
      await page.keyboard.up("Control");
    }
    assert.ok(opened, "three Ctrl+clicks on the document link did not open sourdough.md");
    await screenshot("document-link-opened");
  });

  await t.test("typing [[ offers the note the paragraph is about", { timeout: 120000 }, async () => {
    await openFile(page, DRAFT.name);
    const first = await typeLinkAfter(page, "The jar of wild yeast doubles overnight once fed with flour and water, see ").catch(async (e) => {
      await screenshot("completion-timeout");
      throw e;
    });
    t.diagnostic(`completion: ${JSON.stringify(first)}`);
    await screenshot("completion");
    assert.equal(first.label, "Sourdough bread", JSON.stringify(first.rows));
    await page.keyboard.press("Escape");
  });
});
