// What the end-to-end tests share: the packaged VSIX installed into a fresh code-server (its own
// user data, extensions and HOME), headless Chromium on its workbench, and helpers that drive the
// workbench as a user would (command palette, Quick Open, notifications, status bar, pickers).
//
// Inputs (set by run-tests.sh): CODE_SERVER (the code-server launcher), VSIX, CHROMIUM. Every wait
// is bounded (E2E_STEP_MS, default 60 s).
import { spawn, execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const puppeteer = require("puppeteer-core");

export const EXT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const OUT_ROOT = path.join(EXT_DIR, ".test-output");
export const CODE_SERVER = process.env.CODE_SERVER;
export const VSIX = process.env.VSIX || path.join(EXT_DIR, "kbls.vsix");
export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const STEP_MS = Number(process.env.E2E_STEP_MS || 60000);
/** The code-server process groups a killed test could not end: run-tests.sh ends them. */
const PGIDS = path.join(OUT_ROOT, "e2e", "pgids");

export function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 180000, maxBuffer: 16 << 20, ...opts }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(" ")} failed: ${err.message}\n${stdout}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function until(what, fn, ms = STEP_MS, every = 250) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(every);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ""}`);
}

/** Why the e2e tests cannot run here, or false. */
export function toolchainMissing() {
  if (!CODE_SERVER) return "CODE_SERVER is not set (run through run-tests.sh)";
  if (!fs.existsSync(VSIX)) return `${VSIX} is missing (npm run package)`;
  if (!fs.existsSync(CHROMIUM)) return `${CHROMIUM} is missing`;
  return false;
}

export const BASE_SETTINGS = {
  "kbls.trace.server": "messages",
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "chat.disableAIFeatures": true,
  "security.workspace.trust.enabled": false,
  "extensions.ignoreRecommendations": true,
  "extensions.autoCheckUpdates": false,
  "update.mode": "none",
  "telemetry.telemetryLevel": "off",
  "editor.hover.delay": 200,
  "editor.minimap.enabled": false,
  "window.restoreWindows": "none",
};

/**
 * Installs the VSIX into a fresh code-server, starts it on loopback with `ws` open and opens the
 * workbench in Chromium; three subtests of `t`. Everything ends in `t.after`.
 * `env` is merged over a clean HOME/XDG environment (PATH included, when given).
 */
export async function startSession(t, { name, ws, settings = {}, env: extraEnv = {} }) {
  const out = path.join(OUT_ROOT, name);
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  fs.mkdirSync(path.dirname(PGIDS), { recursive: true });
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `kbls-${name}-`)));
  const userData = path.join(tmp, "user-data");
  const extDir = path.join(tmp, "extensions");
  const home = path.join(tmp, "home");
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  const env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    ...extraEnv,
  };
  const s = { out, tmp, userData, extDir, env, page: undefined, browser: undefined, codeServer: undefined, csLog: "", shot: 0 };
  s.writeSettings = (over = {}) =>
    fs.writeFileSync(path.join(userData, "User", "settings.json"), JSON.stringify({ ...BASE_SETTINGS, ...settings, ...over }, null, 2));
  s.screenshot = async (label) => {
    const file = path.join(out, `${String(++s.shot).padStart(2, "0")}-${label}.png`);
    await s.page.screenshot({ path: file });
    t.diagnostic(`screenshot ${path.relative(EXT_DIR, file)}`);
    return file;
  };
  s.writeSettings();

  t.after(async () => {
    if (s.page) await s.screenshot("final").catch(() => {});
    if (s.browser) await s.browser.close().catch(() => {});
    const cs = s.codeServer;
    if (cs && cs.exitCode === null) {
      // code-server runs in its own process group with its extension host and kbls: end them all.
      const group = (sig) => {
        try {
          process.kill(-cs.pid, sig);
        } catch {}
      };
      group("SIGTERM");
      await Promise.race([new Promise((r) => cs.once("exit", r)), sleep(5000)]);
      group("SIGKILL");
    }
    if (cs) forgetPgid(cs.pid);
    fs.writeFileSync(path.join(out, "code-server.log"), s.csLog);
    // The extension's output channel, written by VS Code under the user-data folder.
    try {
      const logs = execFileSync("find", [userData, "-name", "*kbls*.log"], { encoding: "utf8", timeout: 10000 });
      for (const f of logs.split("\n").filter(Boolean)) fs.copyFileSync(f, path.join(out, "output-" + path.basename(f)));
    } catch {}
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  await t.test("the VSIX installs into code-server", { timeout: 180000 }, async () => {
    const { stdout } = await run(CODE_SERVER, ["--install-extension", VSIX, "--extensions-dir", extDir, "--user-data-dir", userData], { env });
    t.diagnostic(stdout.trim().split("\n").pop());
    const installed = fs.readdirSync(extDir).filter((d) => d.startsWith("kbls.kbls-"));
    if (installed.length !== 1) throw new Error(`extensions dir: ${fs.readdirSync(extDir)}`);
  });

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  await t.test("code-server starts on loopback", { timeout: 120000 }, async () => {
    s.codeServer = spawn(
      CODE_SERVER,
      [
        "--auth", "none",
        "--bind-addr", `127.0.0.1:${port}`,
        "--user-data-dir", userData,
        "--extensions-dir", extDir,
        "--disable-telemetry",
        "--disable-update-check",
        "--disable-workspace-trust",
        "--disable-getting-started-override",
        "--ignore-last-opened",
        ws,
      ],
      { env, stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    // If this test is killed before its cleanup runs, run-tests.sh ends the group from here.
    fs.appendFileSync(PGIDS, `${s.codeServer.pid}\n`);
    const collect = (d) => {
      s.csLog += d.toString();
    };
    s.codeServer.stdout.on("data", collect);
    s.codeServer.stderr.on("data", collect);
    await until("code-server /healthz", async () => {
      if (s.codeServer.exitCode !== null) throw new Error(`code-server exited ${s.codeServer.exitCode}:\n${s.csLog}`);
      const r = await fetch(`${base}/healthz`).catch(() => null);
      return r && r.ok;
    }, 90000, 500);
  });

  await t.test("the workbench opens the folder", { timeout: 120000 }, async () => {
    s.browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      protocolTimeout: 120000,
      userDataDir: path.join(tmp, "chromium"),
      args: [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--window-size=1440,900",
      ],
      defaultViewport: { width: 1440, height: 900 },
    });
    s.page = await s.browser.newPage();
    s.page.setDefaultTimeout(STEP_MS);
    s.page.on("pageerror", (e) => (s.csLog += `\n[page error] ${e.message}`));
    await s.page.goto(`${base}/?folder=${encodeURIComponent(ws)}`, { waitUntil: "domcontentloaded" });
    await s.page.waitForSelector(".monaco-workbench .part.statusbar", { timeout: 90000 });
    await s.screenshot("workbench");
  });
  return s;
}

function forgetPgid(pid) {
  try {
    const left = fs.readFileSync(PGIDS, "utf8").split("\n").filter((l) => l && l !== String(pid));
    if (left.length) fs.writeFileSync(PGIDS, left.join("\n") + "\n");
    else fs.rmSync(PGIDS, { force: true });
  } catch {}
}

/** Command lines of every process descended from `pid` (code-server's extension host, kbls, pip). */
export function descendants(pid) {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter(Boolean)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
  const found = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const r of rows) if (found.has(r.ppid) && !found.has(r.pid)) (found.add(r.pid), (grew = true));
  }
  return rows.filter((r) => r.pid !== pid && found.has(r.pid)).map((r) => r.args);
}

/**
 * Stops code-server's extension host (SIGSTOP), as a loaded machine delays it: what an extension
 * does in answer to a key comes late. Returns the function that lets it run again (idempotent).
 */
export function holdExtensionHost(codeServerPid) {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter(Boolean)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
  const mine = new Set([codeServerPid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const r of rows) if (mine.has(r.ppid) && !mine.has(r.pid)) (mine.add(r.pid), (grew = true));
  }
  const host = rows.find((r) => mine.has(r.pid) && /--type=extensionHost/.test(r.args));
  if (!host) throw new Error(`no extension host under code-server ${codeServerPid}`);
  process.kill(host.pid, "SIGSTOP");
  let held = true;
  return () => {
    if (held) process.kill(host.pid, "SIGCONT");
    held = false;
  };
}

/** A crop of the page around an element (with a margin), for the documentation's screenshots. */
export async function screenshotAround(page, selector, file, margin = 16) {
  const box = await page.evaluate((sel) => {
    const e = [...document.querySelectorAll(sel)].find((x) => x.getBoundingClientRect().width > 0);
    if (!e) return null;
    const r = e.getBoundingClientRect();
    return { x: r.x, y: r.y, width: r.width, height: r.height };
  }, selector);
  if (!box) throw new Error(`no visible ${selector} to photograph`);
  const vp = page.viewport();
  const x = Math.max(0, Math.floor(box.x - margin));
  const y = Math.max(0, Math.floor(box.y - margin));
  const clip = { x, y, width: Math.min(vp.width - x, Math.ceil(box.width + 2 * margin)), height: Math.min(vp.height - y, Math.ceil(box.height + 2 * margin)) };
  // Not beyond the viewport: that resizes the page for the shot, which closes hovers and pickers.
  await page.screenshot({ path: file, clip, captureBeyondViewport: false });
  return file;
}

export async function notifications(page) {
  return page.$$eval(".notifications-toasts .notification-toast", (els) => els.map((e) => e.innerText));
}

/** Each visible toast's text, severity ("info" | "warning" | "error", from its icon) and button labels in order. */
export async function notificationDetails(page) {
  return page.$$eval(".notifications-toasts .notification-toast", (els) =>
    els.map((e) => {
      const icon = e.querySelector(".notification-list-item-icon");
      const severity = /codicon-(info|warning|error)\b/.exec(icon?.className ?? "")?.[1] ?? "unknown";
      const buttons = [...e.querySelectorAll(".monaco-button")].map((b) => b.textContent.trim()).filter(Boolean);
      return { text: e.innerText, severity, buttons };
    }),
  );
}

/** Clicks a button of a visible notification (toast or Notifications center); true when clicked. */
export async function clickNotificationButton(page, label) {
  return page.evaluate((text) => {
    for (const b of document.querySelectorAll(".notifications-toasts .monaco-button, .notifications-center .monaco-button")) {
      if (b.textContent.trim() === text && b.offsetParent !== null) {
        b.click();
        return true;
      }
    }
    return false;
  }, label);
}

export async function waitStatus(page, re, ms) {
  return until(`the status bar to show ${re}`, async () => {
    const kb = (await statusBarTexts(page)).find((x) => /KB/.test(x));
    return kb && re.test(kb) ? kb : null;
  }, ms, 500);
}

export async function statusBarTexts(page) {
  return page.$$eval(".part.statusbar .statusbar-item", (els) =>
    els.map((e) => (e.getAttribute("aria-label") || "") + " | " + e.innerText.trim()),
  );
}

/** The text of the editor that is visible in the active group (hidden tabs stay in the DOM). */
export async function activeEditorText(page) {
  return page.evaluate(() => {
    const e = [...document.querySelectorAll(".editor-group-container.active .monaco-editor .view-lines")].find(
      (x) => x.getBoundingClientRect().width > 0,
    );
    return e ? e.innerText.replace(/\u00a0/g, " ") : "";
  });
}

/** Quick-pick rows once the picker is idle and the rows stopped changing. */
export async function stableRows(page, accept = () => true, ms = 60000) {
  let previous = "";
  return until("the picker's rows to settle", async () => {
    const busy = await page.$eval(".quick-input-widget .quick-input-progress", (e) => e.classList.contains("active") && !e.classList.contains("done")).catch(() => false);
    const rows = await quickPickRows(page);
    const key = JSON.stringify(rows);
    const settled = !busy && rows.length > 0 && key === previous && accept(rows);
    previous = key;
    return settled ? rows : null;
  }, ms, 400);
}

export async function quickPickRows(page) {
  return page.$$eval(".quick-input-widget .quick-input-list .monaco-list-row", (els) =>
    els.map((e) => e.innerText.replace(/\s+/g, " ").trim()),
  );
}

/** The title of the quick input on screen if it matches `title`, else null. */
export async function shownPicker(page, title) {
  return page.evaluate(
    (source, flags) => {
      const widget = document.querySelector(".quick-input-widget");
      if (!widget || widget.style.display === "none" || widget.getBoundingClientRect().height === 0) return null;
      const text = widget.querySelector(".quick-input-title")?.textContent ?? "";
      return new RegExp(source, flags).test(text) ? text : null;
    },
    title.source,
    title.flags,
  );
}

/**
 * Waits for a picker titled `title` on screen and its text box to take the keys; its title.
 * The hidden widget keeps the last picker's title, and right after the command palette runs a
 * command the palette still shows: only a shown widget with that title is the picker.
 */
export async function pickerShown(page, title, ms = 30000) {
  const text = await until(`a picker titled ${title} on screen`, () => shownPicker(page, title), ms, 50);
  await quickInputFocused(page);
  return text;
}

/** Waits until no quick input shows (Escape closed it). */
export async function quickInputHidden(page, ms = 15000) {
  await until("the quick input to close", () =>
    page.evaluate(() => {
      const widget = document.querySelector(".quick-input-widget");
      return !widget || widget.style.display === "none" || widget.getBoundingClientRect().height === 0;
    }),
  ms, 50);
}

/**
 * Waits until the quick input's text box has the keyboard focus: typed too early (the widget of
 * the last picker still fading out), the first letters would land in the editor.
 */
export async function quickInputFocused(page) {
  await until("the quick input to take the keyboard focus", () =>
    page.evaluate(() => {
      const input = document.activeElement;
      return Boolean(input && input.tagName === "INPUT" && input.closest(".quick-input-widget") && input.getBoundingClientRect().width > 0);
    }),
  15000, 50);
}

/** Opens the command palette with F1, filters for the command and runs it. */
export async function runCommand(page, label, screenshot) {
  await page.keyboard.press("Escape");
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget .quick-input-box input", { visible: true });
  await quickInputFocused(page);
  await page.keyboard.type(label, { delay: 10 });
  // The palette puts recently used commands first: pick the row whose label is exactly this one.
  const index = await until(`"${label}" in the command palette`, async () => {
    const labels = await page.$$eval(".quick-input-widget .quick-input-list .monaco-list-row", (els) =>
      els.map((e) => (e.querySelector(".label-name")?.textContent ?? "").replace(/\u00a0/g, " ").trim()),
    );
    const i = labels.indexOf(label);
    return i >= 0 ? i + 1 : null;
  }, 30000).catch(async (e) => {
    await screenshot("palette-timeout");
    throw new Error(`${e.message}; rows: ${JSON.stringify(await quickPickRows(page))}`);
  });
  await screenshot(`palette-${label.replace(/\W+/g, "-").toLowerCase()}`);
  for (let i = 1; i < index; i++) await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
}

/** Ctrl+`key` (Quick Open, Go to Line) and `text` typed into the quick input once it has the focus. */
async function typeInQuickInput(page, key, text) {
  await page.keyboard.press("Escape");
  await page.keyboard.down("Control");
  await page.keyboard.press(key);
  await page.keyboard.up("Control");
  await page.waitForSelector(".quick-input-widget .quick-input-box input", { visible: true });
  await quickInputFocused(page);
  await page.keyboard.type(text, { delay: 10 });
}

/** Opens a file with Quick Open (Ctrl+P). */
export async function openFile(page, name) {
  await typeInQuickInput(page, "KeyP", name);
  await until(`${name} in Quick Open`, async () => {
    const rows = await quickPickRows(page);
    return rows.length > 0 && rows[0].includes(name);
  }, 30000);
  await page.keyboard.press("Enter");
  await until(`${name} active`, async () => {
    const t = await page.$eval(".tabs-container .tab.active", (e) => e.textContent).catch(() => "");
    return t.includes(name);
  }, 20000);
  await sleep(500);
}

/** Ctrl+G: puts the cursor at the start of a 1-based line of the active editor. */
export async function goToLine(page, line) {
  await typeInQuickInput(page, "KeyG", String(line));
  await page.keyboard.press("Enter");
  await until(`the cursor on line ${line}`, async () => {
    const ln = (await statusBarTexts(page)).find((s) => /Ln \d+, Col \d+/.test(s));
    return ln && new RegExp(`Ln ${line},`).test(ln);
  }, 10000);
}

/** The suggest widget's first label and every row, once it shows items; null before. */
export async function suggestions(page) {
  return page.evaluate(() => {
    // The widget is position: fixed (no offsetParent): its box says whether it shows.
    const w = [...document.querySelectorAll(".editor-widget.suggest-widget.visible")].find((e) => e.getBoundingClientRect().height > 0);
    const row = w?.querySelector(".monaco-list-row");
    if (!row) return null;
    const label = row.querySelector(".label-name")?.textContent ?? row.innerText;
    return { label: label.replace(/\u00a0/g, " ").trim(), rows: [...w.querySelectorAll(".monaco-list-row")].map((r) => r.innerText.replace(/\s+/g, " ").trim()) };
  });
}

/**
 * A new last line of the active editor: `paragraph`, then `[[` typed as a user types it; the
 * suggest widget's items once they show (`suggestions`), or an error after 30 s.
 */
export async function typeLinkAfter(page, paragraph) {
  await page.keyboard.down("Control");
  await page.keyboard.press("End");
  await page.keyboard.up("Control");
  await page.keyboard.press("Enter");
  await page.keyboard.type(paragraph, { delay: 5 });
  await page.keyboard.type("[[", { delay: 150 });
  return until("the suggest widget with notes", () => suggestions(page), 30000);
}
