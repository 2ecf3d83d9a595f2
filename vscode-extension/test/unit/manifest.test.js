// package.json as VS Code and the marketplaces read it: every setting scoped and typed, the
// commands' menus and keybinding, the walkthrough's files, the metadata vsce and Open VSX want,
// and the VSIX's contents (.vscodeignore keeps the server wheel and the media).
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { EXT_DIR } = require("../helpers/repo.js");
const { createHost, installVscode } = require("../helpers/fake-vscode.js");

// commands.js imports `vscode`: load it inside the stand-in (only its Commands table is read).
const uninstall = installVscode(createHost());
const { Commands } = require("../../out/commands.js");
uninstall();

const pkg = JSON.parse(fs.readFileSync(path.join(EXT_DIR, "package.json"), "utf8"));
const settings = pkg.contributes.configuration.properties;
const SCOPES = ["application", "machine", "machine-overridable", "window", "resource", "language-overridable"];

test("every setting has a scope and a description; whole numbers are integers", () => {
  for (const [key, s] of Object.entries(settings)) {
    assert.ok(SCOPES.includes(s.scope), `${key} scope ${s.scope}`);
    assert.ok(s.markdownDescription || s.description, `${key} description`);
    if (typeof s.default === "number") assert.equal(s.type, Number.isInteger(s.default) ? "integer" : "number", key);
  }
  // The server's paths belong to the machine it runs on, and the workspace may not choose them
  // unless trusted.
  for (const key of ["kbls.serverPath", "kbls.pythonPath", "kbls.extraArgs"]) {
    assert.equal(settings[key].scope, "machine-overridable", key);
    assert.ok(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(key), key);
  }
  assert.deepEqual(settings["kbls.hover.enabled"], { ...settings["kbls.hover.enabled"], type: "boolean", default: true });
});

test("the commands the code registers are the ones the manifest contributes", () => {
  const contributed = pkg.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual(contributed, Object.values(Commands).sort());
  for (const c of pkg.contributes.commands) assert.equal(c.category, "KB", c.command);
});

test("KB: Related Notes only for markdown, in the palette, the editor context menu and title bar", () => {
  const where = (menu) => (pkg.contributes.menus[menu] || []).find((m) => m.command === Commands.related);
  for (const menu of ["commandPalette", "editor/context", "editor/title"]) {
    assert.ok(where(menu), menu);
    assert.match(where(menu).when, /editorLangId == markdown/, menu);
  }
});

test("KB: Search has a default keybinding, not Cmd+Alt+K on macOS (the Keyboard Shortcuts editor's)", () => {
  const kb = pkg.contributes.keybindings.find((k) => k.command === Commands.search);
  assert.equal(kb.key, "ctrl+alt+k");
  assert.equal(kb.mac, "ctrl+cmd+k");
  assert.equal(kb.when, undefined, "works from anywhere");
});

test("activation: markdown or a .kbls.yaml (opt-in decides what starts), never *", () => {
  assert.deepEqual(pkg.activationEvents.sort(), ["onLanguage:markdown", "workspaceContains:.kbls.yaml"]);
});

test("the walkthrough's steps point to files the VSIX carries and to real commands", () => {
  const ignore = fs.readFileSync(path.join(EXT_DIR, ".vscodeignore"), "utf8");
  for (const w of pkg.contributes.walkthroughs) {
    for (const step of w.steps) {
      const media = step.media.markdown || step.media.image;
      assert.ok(fs.existsSync(path.join(EXT_DIR, media)), media);
      assert.ok(ignore.includes(`!${path.dirname(media)}/*.md`) || ignore.includes(`!${media}`), `${media} is packaged`);
      for (const m of step.description.matchAll(/\(command:([\w.]+)\)/g)) assert.ok(Object.values(Commands).includes(m[1]), m[1]);
    }
  }
});

test("marketplace metadata: icon (a 128x128 PNG), repository, bugs, homepage, licence", () => {
  const icon = fs.readFileSync(path.join(EXT_DIR, pkg.icon));
  assert.equal(icon.subarray(1, 4).toString(), "PNG");
  assert.equal(icon.readUInt32BE(16), 128);
  assert.equal(icon.readUInt32BE(20), 128);
  assert.match(pkg.repository.url, /^https:\/\/github\.com\//);
  assert.match(pkg.bugs.url, /\/issues$/);
  assert.match(pkg.homepage, /^https:\/\//);
  assert.equal(pkg.license, "Apache-2.0");
  assert.ok(fs.existsSync(path.join(EXT_DIR, "LICENSE")));
  assert.doesNotMatch(pkg.scripts.package, /allow-missing-repository/);
});

test("the VSIX carries the server wheel of the extension's version", () => {
  const ignore = fs.readFileSync(path.join(EXT_DIR, ".vscodeignore"), "utf8");
  assert.match(ignore, /^!server\/kbls-\*-py3-none-any\.whl$/m);
  assert.match(ignore, /^!media\/icon\.png$/m);
  assert.match(pkg.scripts.package, /bundle-wheel\.mjs/);
});

test("the Related Notes view: in the Explorer once enabled; Insert link here on its rows; click-only commands hidden from the palette", () => {
  const view = pkg.contributes.views.explorer.find((v) => v.id === "kbls.relatedNotes");
  assert.equal(view.name, "Related Notes");
  assert.equal(view.when, "kbls.enabled");
  const onRow = pkg.contributes.menus["view/item/context"].filter((m) => m.command === Commands.insertLink);
  assert.deepEqual(onRow.map((m) => m.group).sort(), ["inline", "navigation@1"]);
  for (const m of onRow) assert.equal(m.when, "view == kbls.relatedNotes && viewItem == kbls.relatedNote");
  assert.ok(pkg.contributes.menus["view/title"].some((m) => m.command === Commands.refresh && /view == kbls\.relatedNotes/.test(m.when)));
  for (const id of [Commands.open, Commands.insertLink]) {
    assert.equal(pkg.contributes.menus.commandPalette.find((m) => m.command === id)?.when, "false", id);
  }
  assert.deepEqual(settings["kbls.related.linkStyle"].enum, ["auto", "markdown", "wiki"]);
  assert.equal(settings["kbls.related.debounceMs"].default, 300);
});

test("KB: Search Selection and KB: Notes Like This: editor context menu and palette only with a selection in markdown", () => {
  for (const id of [Commands.searchSelection, Commands.notesLikeThis]) {
    for (const menu of ["commandPalette", "editor/context"]) {
      const m = pkg.contributes.menus[menu].find((x) => x.command === id);
      assert.ok(m, `${id} in ${menu}`);
      assert.match(m.when, /editorLangId == markdown/);
      assert.match(m.when, /editorHasSelection/);
    }
  }
});
