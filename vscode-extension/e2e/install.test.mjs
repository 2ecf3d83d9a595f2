// End-to-end, as a new user: code-server with the VSIX and no `kbls` anywhere (no setting, nothing
// on PATH), a folder of notes without .kbls.yaml. Opening its README asks whether to index the
// folder and starts nothing; Yes finds no server and offers to install it; the install (a venv in
// the extension's global storage, pip install of the wheel the VSIX carries, dependencies from the
// package index) runs with progress; the server then indexes the folder and KB: Search answers.
//
// PIP_CACHE_DIR defaults to vscode-extension/.cache/pip so that a second run does not download
// the dependencies again (the install itself is real each time).
import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import {
  EXT_DIR,
  sleep,
  until,
  toolchainMissing,
  startSession,
  notifications,
  notificationDetails,
  clickNotificationButton,
  waitStatus,
  statusBarTexts,
  stableRows,
  quickPickRows,
  runCommand,
  pickerShown,
  openFile,
  descendants,
} from "./workbench.mjs";

const require = createRequire(import.meta.url);
const { makeWorkspace, NOTES } = require("../test/helpers/workspace.js");

const NOTE_COUNT = Object.keys(NOTES).length + 1; // and the README
const QUESTION = /Index the notes in this folder with kbls\?/;
const INSTALL_MS = Number(process.env.E2E_INSTALL_MS || 15 * 60000);

/** A python >= 3.10 (its real path), to be the only python on the test's PATH. */
function realPython() {
  for (const name of ["python3", "python"]) {
    try {
      return execFileSync(name, ["-c", "import sys, venv, ensurepip; assert sys.version_info >= (3, 10); print(sys.executable)"], {
        encoding: "utf8",
        timeout: 15000,
      }).trim();
    } catch {}
  }
  return undefined;
}
const PYTHON = realPython();
const skipReason = toolchainMissing() || (!PYTHON ? "no python >= 3.10 with venv and ensurepip on PATH" : false);

test("no kbls anywhere: opt in, install the server from the VSIX, search", { skip: skipReason, timeout: 30 * 60000 }, async (t) => {
  const ws = makeWorkspace("kbls-install-ws-");
  fs.rmSync(path.join(ws, ".kbls.yaml"));
  fs.writeFileSync(path.join(ws, "README.md"), "# My notes\n\nA folder of notes on Rust, baking, travel and git.\n");
  // PATH: a folder with only `python3`, node 24 (code-server runs on it) and the system folders.
  // (code-server's extension host may take PATH from a login shell instead: either way the
  // extension must report that it found no kbls, which the second step checks.)
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), "kbls-install-bin-"));
  fs.symlinkSync(PYTHON, path.join(bin, "python3"));
  const nodeBin = path.dirname(process.execPath);
  const PATH = [bin, nodeBin, "/usr/bin", "/bin"].join(":");
  t.after(() => {
    fs.rmSync(ws, { recursive: true, force: true });
    fs.rmSync(bin, { recursive: true, force: true });
  });
  const onPath = PATH.split(":").filter((d) => fs.existsSync(path.join(d, "kbls")));
  assert.deepEqual(onPath, [], "no kbls on the test's PATH");

  const session = await startSession(t, {
    name: "e2e-install",
    ws,
    env: {
      PATH,
      PIP_CACHE_DIR: process.env.PIP_CACHE_DIR || path.join(EXT_DIR, ".cache", "pip"),
      PIP_DISABLE_PIP_VERSION_CHECK: "1",
      VIRTUAL_ENV: "",
      PYTHONPATH: "",
    },
  });
  const { page, screenshot } = session;
  const kblsProcesses = () => descendants(session.codeServer.pid).filter((a) => /\bkbls\b/.test(a) && /\bserve\b/.test(a));
  const venv = path.join(session.userData, "User", "globalStorage", "kbls.kbls", "server-venv");

  await t.test("opening the README asks once whether to index the folder, and starts nothing", { timeout: 120000 }, async () => {
    await openFile(page, "README.md");
    const toast = await until("the opt-in question", async () => (await notifications(page)).find((x) => QUESTION.test(x)) ?? null, 60000);
    await screenshot("opt-in-question");
    for (const choice of ["Yes", "Not now", "Never for this folder"]) assert.match(toast, new RegExp(choice));
    await sleep(2000);
    const texts = await notifications(page);
    assert.ok(!texts.some((x) => /not found/.test(x)), `nothing looked for a server yet: ${JSON.stringify(texts)}`);
    assert.ok(!(await statusBarTexts(page)).some((x) => /KB:/.test(x)), "no KB status-bar item");
    assert.deepEqual(kblsProcesses(), []);
    assert.equal(fs.existsSync(path.join(ws, ".kbls.yaml")), false);
  });

  await t.test("Yes: no server yet, and an information prompt offers the install first", { timeout: 120000 }, async () => {
    assert.ok(await clickNotificationButton(page, "Yes"), "the Yes button");
    const toast = await until("the not-installed-yet notification", async () =>
      (await notificationDetails(page)).find((x) => /not installed yet/.test(x.text)) ?? null,
    );
    t.diagnostic(`notification: ${toast.text.replace(/\s+/g, " ").slice(0, 400)}`);
    // The normal first start, not an error; the install is the first button.
    assert.equal(toast.severity, "info", `severity of ${JSON.stringify(toast)}`);
    assert.equal(toast.buttons[0], "Install kbls server", `buttons: ${JSON.stringify(toast.buttons)}`);
    // The install-it-yourself command names the wheel this installed extension carries.
    assert.doesNotMatch(toast.text, /(uv tool|pipx) install kbls\b/, "kbls is not on the package index");
    const wheel = /`uv tool install '?([^`']+\/server\/kbls-[\d.]+-py3-none-any\.whl)'?`/.exec(toast.text)?.[1];
    assert.ok(wheel, `a uv tool install of the wheel in: ${toast.text}`);
    assert.ok(wheel.startsWith(session.extDir), `the installed extension's own wheel: ${wheel}`);
    assert.ok(fs.existsSync(wheel), `${wheel} exists`);
    assert.ok(toast.text.includes(`pipx install ${wheel}`) || toast.text.includes(`pipx install '${wheel}'`), toast.text);
    await waitStatus(page, /KB: no server/, 20000);
    await screenshot("not-found-install-offer");
  });

  await t.test("Install kbls server: a venv in global storage, pip with progress, then the server indexes the folder", { timeout: INSTALL_MS + 60000 }, async () => {
    const started = Date.now();
    assert.ok(await clickNotificationButton(page, "Install kbls server"), "the Install kbls server button");
    const progress = await until("the install progress notification", async () =>
      (await notifications(page)).find((x) => /kbls/.test(x) && /(Creating|Installing|Downloading)/.test(x)) ?? null,
    30000);
    t.diagnostic(`progress: ${progress.replace(/\s+/g, " ").slice(0, 200)}`);
    await screenshot("installing");
    let shotDownloading = false;
    await until(`"KB: ${NOTE_COUNT} notes" after the install`, async () => {
      if (!shotDownloading && (await notifications(page)).some((x) => /Downloading|Installing packages/.test(x))) {
        shotDownloading = true;
        await screenshot("installing-packages");
      }
      const kb = (await statusBarTexts(page)).find((x) => /KB/.test(x));
      return kb && new RegExp(`KB: ${NOTE_COUNT} notes`).test(kb);
    }, INSTALL_MS, 1000).catch(async (e) => {
      await screenshot("install-timeout");
      throw new Error(`${e.message}; notifications: ${JSON.stringify(await notifications(page))}; status: ${JSON.stringify(await statusBarTexts(page))}`);
    });
    t.diagnostic(`installed and indexed in ${Math.round((Date.now() - started) / 1000)} s`);
    await screenshot("installed-indexed");
    const kbls = path.join(venv, "bin", "kbls");
    assert.ok(fs.existsSync(kbls), `${kbls} exists`);
    const pkg = JSON.parse(fs.readFileSync(path.join(EXT_DIR, "package.json"), "utf8"));
    assert.equal(execFileSync(kbls, ["--version"], { encoding: "utf8" }).trim(), `kbls ${pkg.version}`, "the server of the extension's version");
    const servers = kblsProcesses();
    assert.ok(servers.some((a) => a.includes(`${kbls} serve`)), `the running server is the installed one: ${JSON.stringify(servers)}`);
  });

  await t.test("KB: Search answers from the installed server", { timeout: 120000 }, async () => {
    await runCommand(page, "KB: Search", screenshot);
    await pickerShown(page, /^KB: Search/);
    await page.keyboard.type("who owns the heap data after a move", { delay: 15 });
    const rows = await stableRows(page, (r) => /rust\/ownership\.md/.test(r[0])).catch(async (e) => {
      await screenshot("search-timeout");
      throw new Error(`${e.message}; rows: ${JSON.stringify(await quickPickRows(page))}`);
    });
    await screenshot("search-results");
    assert.match(rows[0], /Ownership in Rust/);
    await page.keyboard.press("Escape");
  });
});
