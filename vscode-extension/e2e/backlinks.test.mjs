// End-to-end: references and rename of notes in a real VS Code (code-server + Chromium) with the
// packaged VSIX and the real server, beside VS Code's own markdown language server: Go to
// References (Shift+F12) on a markdown link lists each link once (kbls leaves to the built-in
// server the markdown links it lists itself), F2 on a note's title rewrites the links by title,
// and renaming the note in the explorer rewrites the links by path (workspace/willRenameFiles).
//
// Inputs as e2e.test.mjs (run-tests.sh sets them). Every wait is bounded.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { sleep, until, toolchainMissing, startSession, statusBarTexts, runCommand, openFile } from "./workbench.mjs";

const require = createRequire(import.meta.url);
const { KBLS } = require("../test/helpers/repo.js");

const skipReason = toolchainMissing() || (!fs.existsSync(KBLS) ? `${KBLS} is missing` : false);

const CAFE = "Projets/Café Crème.md";
const HUB = "hub.md";
const NOTES = {
  [CAFE]: "---\ntitle: Café Crème\naliases: [Coffee]\n---\nIntro about coffee.\n\n## Brewing Notes\n\nSteps.\n",
  [HUB]: [
    "# Hub",
    "",
    "- [[Café Crème]] by title",
    "- [[Café Crème#Brewing Notes]] anchor as text",
    "- [crème](<Projets/Café Crème.md#brewing-notes>) anchor as slug",
    "- [encoded](Projets/Caf%C3%A9%20Cr%C3%A8me.md) percent-encoded",
    "- [[Projets/Café Crème|path label]] by path",
    "",
  ].join("\n"),
  "deep/reader.md": "# Reader\n\nSee [up](../Projets/Café%20Crème.md) for coffee.\n",
};

function makeVault() {
  const parent = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "kbls-e2e-backlinks-")));
  const dir = path.join(parent, "Mes notes");
  for (const [rel, text] of Object.entries(NOTES)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  fs.writeFileSync(path.join(dir, ".kbls.yaml"), "store: ../store\n");
  return { parent, dir };
}

/** Ctrl+G to a 1-based line, then `right` characters along it; checked in the status bar
 * (`Ln L, Col C`) and done again once if the cursor is elsewhere, so a test acts where it says. */
async function cursorAt(page, line, right) {
  const want = new RegExp(`Ln ${line}, Col ${right + 1}\\b`);
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press("Escape");
    await page.keyboard.down("Control");
    await page.keyboard.press("KeyG");
    await page.keyboard.up("Control");
    await page.waitForSelector(".quick-input-widget .quick-input-box input", { visible: true });
    await page.keyboard.type(String(line), { delay: 10 });
    await page.keyboard.press("Enter");
    await until(`the cursor on line ${line}`, async () => {
      const ln = (await statusBarTexts(page)).find((s) => /Ln \d+, Col \d+/.test(s));
      return ln && new RegExp(`Ln ${line},`).test(ln);
    }, 10000);
    for (let i = 0; i < right; i++) await page.keyboard.press("ArrowRight");
    const at = await until(`the cursor at line ${line}, column ${right + 1}`, async () =>
      (await statusBarTexts(page)).some((s) => want.test(s)) || null, 5000).catch((e) => e);
    if (at === true) return;
    if (attempt === 2) throw at;
  }
}

const read = (dir, rel) => fs.readFileSync(path.join(dir, rel), "utf8");

/** F2 at the cursor: the rename box opens on `from` selected (typing replaces it once the box
 * has the focus), `to` is typed and applied, and every edited note is saved. */
async function renameWithF2(page, screenshot, from, to, tag) {
  await page.keyboard.press("F2");
  await until("the rename box to take the keyboard focus", () =>
    page.evaluate((want) => {
      const input = document.activeElement;
      return Boolean(input && input.closest(".rename-box") && input.value === want);
    }, from),
  30000, 100).catch(async (e) => {
    await screenshot(`${tag}-timeout`);
    throw e;
  });
  await page.keyboard.type(to, { delay: 10 });
  await page.keyboard.press("Enter");
  await sleep(1000);
  await runCommand(page, "File: Save All Files", screenshot);
}

/** hub.md's text once `done(text)` holds (its text in the error otherwise). */
async function hubOnce(dir, screenshot, what, done, tag) {
  return until(what, async () => {
    const text = read(dir, HUB);
    return done(text) ? text : null;
  }, 30000).catch(async (e) => {
    await screenshot(`${tag}-not-applied`);
    throw new Error(`${e.message}; hub.md: ${read(dir, HUB)}`);
  });
}


test("references and rename of notes in a real VS Code", { skip: skipReason, timeout: 15 * 60000 }, async (t) => {
  const { parent, dir } = makeVault();
  t.after(() => fs.rmSync(parent, { recursive: true, force: true }));
  const session = await startSession(t, { name: "backlinks", ws: dir, settings: { "kbls.serverPath": KBLS } });
  const { page, screenshot } = session;

  await t.test("the workspace is indexed", { timeout: 240000 }, async () => {
    await until('the status bar to show "KB: 3 notes"', async () => {
      const kb = (await statusBarTexts(page)).find((s) => s.includes("KB"));
      return kb && /KB: 3 notes/.test(kb) ? kb : null;
    }, 200000, 500);
  });

  await t.test("Go to References on a markdown link lists each link once", { timeout: 120000 }, async () => {
    await openFile(page, HUB);
    await cursorAt(page, 5, 12); // inside `<Projets/Café Crème.md`
    await page.keyboard.down("Shift");
    await page.keyboard.press("F12");
    await page.keyboard.up("Shift");
    // The peek's tree: a row per file with its count, the first file's links under it.
    const counts = await until("the references peek", async () => {
      const badges = await page.$$eval(".reference-zone-widget .ref-tree .monaco-count-badge", (els) =>
        els.map((e) => Number(e.textContent.trim())),
      ).catch(() => []);
      return badges.length > 0 ? badges : null;
    }, 60000).catch(async (e) => {
      await screenshot("references-timeout");
      throw e;
    });
    await screenshot("references");
    // kbls: the wiki link naming the heading; VS Code's markdown server: the three markdown links
    // to the file. Doubled, hub.md would count 4 (the `[crème]` link twice).
    assert.equal(counts.reduce((a, b) => a + b, 0), 4, JSON.stringify(counts));
    await page.keyboard.press("Escape");
  });

  await t.test("a code lens on the title counts the backlinks", { timeout: 120000 }, async () => {
    await openFile(page, "Café Crème.md");
    const lens = await until("the code lens", async () => {
      const texts = await page.$$eval(".editor-group-container.active .codelens-decoration", (els) => els.map((e) => e.textContent));
      return texts.find((x) => /backlinks/.test(x)) ?? null;
    }, 60000).catch(async (e) => {
      await screenshot("codelens-timeout");
      throw e;
    });
    await screenshot("codelens");
    assert.match(lens, /^2 backlinks · \d+ related$/);
  });

  await t.test("the Related Notes view lists the note's backlinks", { timeout: 120000 }, async () => {
    await openFile(page, "Café Crème.md");
    await cursorAt(page, 5, 0);
    await runCommand(page, "Explorer: Focus on Related Notes View", screenshot);
    const rows = await until('the "Backlinks (2 notes)" group and its links', async () => {
      const found = await page.evaluate(() => {
        for (const pane of document.querySelectorAll(".part.sidebar .pane")) {
          const header = pane.querySelector(".pane-header");
          if (!header || !/Related Notes/i.test(header.innerText)) continue;
          return [...pane.querySelectorAll(".pane-body .monaco-list-row")].map((r) => r.innerText.replace(/\s+/g, " ").trim());
        }
        return [];
      });
      const at = found.findIndex((r) => r.startsWith("Backlinks (2 notes)"));
      return at >= 0 && found.length > at + 1 ? found.slice(at) : null;
    }, 60000).catch(async (e) => {
      await screenshot("related-backlinks-timeout");
      throw e;
    });
    await screenshot("related-backlinks");
    assert.ok(rows.some((r) => /hub\.md:3/.test(r)), JSON.stringify(rows));
    assert.ok(rows.some((r) => /reader\.md:3/.test(r)), JSON.stringify(rows));
  });

  await t.test("F2 on the title renames the note and its links by title", { timeout: 120000 }, async () => {
    await openFile(page, "Café Crème.md");
    await cursorAt(page, 2, 10); // in `title: Café Crème`
    await renameWithF2(page, screenshot, "Café Crème", "Café au lait", "rename");
    const hub = await hubOnce(dir, screenshot, "hub.md rewritten", (text) => text.includes("[[Café au lait]]"), "rename");
    assert.match(hub, /\[\[Café au lait#Brewing Notes\]\]/);
    assert.match(hub, /\[\[Projets\/Café Crème\|path label\]\]/, "a link by path stays");
    assert.match(read(dir, CAFE), /^title: Café au lait$/m);
  });

  await t.test("F2 on a heading renames it and the anchors naming it, wiki and markdown", { timeout: 120000 }, async () => {
    // VS Code's own markdown server renames headings too, and VS Code asks only one provider:
    // the wiki anchor rewritten shows that kbls answered (the built-in one knows no wiki links).
    await openFile(page, "Café Crème.md");
    await cursorAt(page, 7, 5); // in `## Brewing Notes`
    await renameWithF2(page, screenshot, "Brewing Notes", "Brewing Steps", "heading-rename");
    const hub = await hubOnce(dir, screenshot, "hub.md's anchors rewritten",
      (text) => text.includes("#brewing-steps") || text.includes("#Brewing Steps"), "heading-rename");
    assert.match(hub, /\[\[Café au lait#Brewing Steps\]\]/, `the wiki anchor: ${hub}`);
    assert.match(hub, /\[crème\]\(<Projets\/Café Crème\.md#brewing-steps>\)/, `the markdown anchor: ${hub}`);
    assert.match(read(dir, CAFE), /^## Brewing Steps$/m);
  });

  await t.test("renaming the note in the explorer rewrites the links by path", { timeout: 180000 }, async () => {
    await openFile(page, "Café Crème.md");
    await runCommand(page, "File: Reveal Active File in Explorer View", screenshot);
    await sleep(1000);
    await page.keyboard.press("F2");
    await page.waitForSelector(".explorer-folders-view .monaco-inputbox input", { visible: true, timeout: 30000 }).catch(async (e) => {
      await screenshot("explorer-rename-timeout");
      throw e;
    });
    await page.keyboard.down("Control");
    await page.keyboard.press("KeyA");
    await page.keyboard.up("Control");
    await page.keyboard.type("Café v2.md", { delay: 10 });
    await page.keyboard.press("Enter");
    // VS Code asks before it applies an extension's edits for a file move: OK.
    await until("VS Code's question about the extension's refactoring", async () => {
      const clicked = await page.evaluate(() => {
        const box = document.querySelector(".monaco-dialog-box");
        if (!box || !/refactoring changes/.test(box.textContent || "")) return false;
        const ok = [...box.querySelectorAll(".monaco-button")].find((b) => b.textContent.trim() === "OK");
        if (ok) ok.click();
        return Boolean(ok);
      });
      return clicked || null;
    }, 30000).catch(async (e) => {
      await screenshot("move-dialog-timeout");
      throw e;
    });
    await screenshot("move-confirmed");
    await until("the note moved", async () => fs.existsSync(path.join(dir, "Projets/Café v2.md")), 30000);
    await sleep(1500);
    await runCommand(page, "File: Save All Files", screenshot);
    const hub = await hubOnce(dir, screenshot, "hub.md's links follow", (text) => text.includes("Projets/Café v2|path label"), "move");
    await screenshot("moved");
    assert.match(hub, /\[crème\]\(<Projets\/Café v2\.md#brewing-steps>\)/);
    assert.match(hub, /\[encoded\]\(Projets\/Caf%C3%A9%20v2\.md\)/);
    assert.match(hub, /\[\[Café au lait\]\]/, "a link by title stays");
    assert.match(read(dir, "deep/reader.md"), /\[up\]\(\.\.\/Projets\/Caf%C3%A9%20v2\.md\)/);
  });
});
