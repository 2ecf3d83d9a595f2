// A small stand-in for the `vscode` module, enough for the bundled extension (dist/extension.js)
// and vscode-languageclient to run under plain node against the real server. Records what the
// extension shows (status bar, pickers, messages, opened editors) so tests can drive and check it.
// Anything not modelled here is a no-op stub that returns a Disposable.
const path = require("node:path");
const fs = require("node:fs");
const { EventEmitter: NodeEmitter } = require("node:events");
const { pathToFileURL, fileURLToPath } = require("node:url");

// ── generic stubs ─────────────────────────────────────────────────────────────────────────────
const disposable = () => ({ dispose() {} });
function stub(name) {
  const fn = function () {
    return disposable();
  };
  return new Proxy(fn, {
    get(target, key) {
      if (key === "then") return undefined;
      if (key === Symbol.toPrimitive) return () => name;
      if (key === "toString") return () => name;
      if (!(key in target)) target[key] = stub(`${name}.${String(key)}`);
      return target[key];
    },
    construct() {
      return {};
    },
  });
}
function namespace(name, members) {
  return new Proxy(members, {
    get(target, key) {
      if (key === "then") return undefined;
      if (!(key in target)) target[key] = stub(`${name}.${String(key)}`);
      return target[key];
    },
  });
}

// ── types ─────────────────────────────────────────────────────────────────────────────────────
class Disposable {
  constructor(fn) {
    this._fn = fn;
  }
  static from(...items) {
    return new Disposable(() => items.forEach((i) => i && i.dispose && i.dispose()));
  }
  dispose() {
    if (this._fn) this._fn();
    this._fn = undefined;
  }
}

class EventEmitter {
  constructor() {
    this._listeners = new Set();
    this.event = (listener, thisArg, disposables) => {
      const l = thisArg ? listener.bind(thisArg) : listener;
      this._listeners.add(l);
      const d = new Disposable(() => this._listeners.delete(l));
      if (Array.isArray(disposables)) disposables.push(d);
      return d;
    };
  }
  fire(e) {
    for (const l of [...this._listeners]) l(e);
  }
  dispose() {
    this._listeners.clear();
  }
}

class Uri {
  constructor(scheme, authority, p, query, fragment) {
    this.scheme = scheme;
    this.authority = authority || "";
    this.path = p || "";
    this.query = query || "";
    this.fragment = fragment || "";
  }
  static file(p) {
    return new Uri("file", "", path.resolve(p));
  }
  static parse(s) {
    const u = new URL(s);
    const scheme = u.protocol.replace(/:$/, "");
    if (scheme === "file") return new Uri("file", "", fileURLToPath(u.href.split("#")[0]), "", u.hash.slice(1));
    return new Uri(scheme, u.host, decodeURIComponent(u.pathname), u.search.slice(1), u.hash.slice(1));
  }
  static from(c) {
    return new Uri(c.scheme, c.authority, c.path, c.query, c.fragment);
  }
  get fsPath() {
    return this.path;
  }
  with(c) {
    return new Uri(c.scheme ?? this.scheme, c.authority ?? this.authority, c.path ?? this.path, c.query ?? this.query, c.fragment ?? this.fragment);
  }
  toString() {
    if (this.scheme === "file") return pathToFileURL(this.path).href + (this.fragment ? `#${this.fragment}` : "");
    return `${this.scheme}:${this.authority ? "//" + this.authority : ""}${this.path}`;
  }
  toJSON() {
    return { scheme: this.scheme, path: this.path, fsPath: this.fsPath, external: this.toString() };
  }
}

class Position {
  constructor(line, character) {
    this.line = line;
    this.character = character;
  }
  isBefore(o) {
    return this.line < o.line || (this.line === o.line && this.character < o.character);
  }
  isEqual(o) {
    return this.line === o.line && this.character === o.character;
  }
  translate(dl = 0, dc = 0) {
    return new Position(this.line + dl, this.character + dc);
  }
}
class Range {
  constructor(a, b, c, d) {
    if (typeof a === "number") {
      a = new Position(a, b);
      b = new Position(c, d);
    }
    [this.start, this.end] = b.isBefore(a) ? [b, a] : [a, b];
  }
  get isEmpty() {
    return this.start.isEqual(this.end);
  }
  contains(p) {
    return !p.isBefore(this.start) && (p.isBefore(this.end) || p.isEqual(this.end));
  }
}
class Selection extends Range {
  constructor(anchor, active, c, d) {
    if (typeof anchor === "number") {
      anchor = new Position(anchor, active);
      active = new Position(c, d);
    }
    super(anchor, active);
    this.anchor = anchor;
    this.active = active;
  }
}
class Location {
  constructor(uri, rangeOrPosition) {
    this.uri = uri;
    this.range = rangeOrPosition instanceof Position ? new Range(rangeOrPosition, rangeOrPosition) : rangeOrPosition;
  }
}
class MarkdownString {
  constructor(value = "", supportThemeIcons = false) {
    this.value = value;
    this.supportThemeIcons = supportThemeIcons;
  }
  appendMarkdown(v) {
    this.value += v;
    return this;
  }
  appendText(v) {
    this.value += v;
    return this;
  }
  appendCodeblock(v, lang = "") {
    this.value += `\n\`\`\`${lang}\n${v}\n\`\`\`\n`;
    return this;
  }
}
class Hover {
  constructor(contents, range) {
    this.contents = Array.isArray(contents) ? contents : [contents];
    this.range = range;
  }
}
class SymbolInformation {
  constructor(name, kind, containerName, location) {
    this.name = name;
    this.kind = kind;
    this.containerName = containerName;
    this.location = location;
  }
}
class ThemeIcon {
  constructor(id) {
    this.id = id;
  }
}
class CompletionItem {
  constructor(label, kind) {
    this.label = label;
    this.kind = kind;
  }
}
class CompletionList {
  constructor(items = [], isIncomplete = false) {
    this.items = items;
    this.isIncomplete = isIncomplete;
  }
}
class TextEdit {
  constructor(range, newText) {
    this.range = range;
    this.newText = newText;
  }
  static replace(range, newText) {
    return new TextEdit(range, newText);
  }
  static insert(position, newText) {
    return new TextEdit(new Range(position, position), newText);
  }
}
class DocumentLink {
  constructor(range, target) {
    this.range = range;
    this.target = target;
  }
}
class SnippetString {
  constructor(value = "") {
    this.value = value;
  }
}
const numbered = () => new Proxy({}, { get: (t, k) => (typeof k === "string" ? (k in t ? t[k] : (t[k] = Object.keys(t).length)) : undefined) });
class TreeItem {
  constructor(label, collapsibleState = 0) {
    this.label = label;
    this.collapsibleState = collapsibleState;
  }
}
class ThemeColor {
  constructor(id) {
    this.id = id;
  }
}
class CancellationError extends Error {
  constructor() {
    super("Canceled");
    this.name = "Canceled";
  }
}
class CancellationTokenSource {
  constructor() {
    const emitter = new EventEmitter();
    this._emitter = emitter;
    this.token = { isCancellationRequested: false, onCancellationRequested: emitter.event };
  }
  cancel() {
    if (this.token.isCancellationRequested) return;
    this.token.isCancellationRequested = true;
    this._emitter.fire(undefined);
  }
  dispose() {
    this._emitter.dispose();
  }
}
const SymbolKind = new Proxy({}, { get: (t, k) => (k in t ? t[k] : typeof k === "string" ? 0 : undefined) });
Object.assign(SymbolKind, { File: 0, Module: 1, Namespace: 2, Package: 3, Class: 4, Method: 5, Property: 6, Field: 7, Constructor: 8, Enum: 9, Interface: 10, Function: 11, Variable: 12, Constant: 13, String: 14 });

// ── the host ──────────────────────────────────────────────────────────────────────────────────
function createHost({ workspaceFolders = [], settings = {} } = {}) {
  const events = new NodeEmitter();
  const host = {
    events,
    commands: new Map(),
    statusItems: [],
    quickPicks: [],
    messages: [],
    output: [],
    contentProviders: new Map(),
    hoverProviders: [],
    symbolProviders: [],
    completionProviders: [],
    definitionProviders: [],
    documentLinkProviders: [],
    openedEditors: [],
    settings: { ...settings },
    respond: undefined,
    configEmitter: new EventEmitter(),
    openDocEmitter: new EventEmitter(),
    createdEmitter: new EventEmitter(),
    textDocuments: [],
    /** Tree views by id: { provider, visible, message, description, items() }. */
    treeViews: new Map(),
    /** Every `editor.edit` as [{ editor, inserts: [{ position, text }] }]. */
    edits: [],
    selectionEmitter: new EventEmitter(),
    activeEditorEmitter: new EventEmitter(),
  };
  const folders = workspaceFolders.map((p, index) => ({ uri: Uri.file(p), name: path.basename(p), index }));

  function makeDocument(uri, text, languageId) {
    const lines = text.split("\n");
    return {
      uri,
      fileName: uri.fsPath,
      languageId,
      version: 1,
      isClosed: false,
      isDirty: false,
      isUntitled: false,
      lineCount: lines.length,
      eol: 1,
      getText: (range) => {
        if (!range) return text;
        return lines.slice(range.start.line, range.end.line + 1).join("\n");
      },
      lineAt: (l) => ({ text: lines[typeof l === "number" ? l : l.line] ?? "", lineNumber: l }),
      validatePosition(p) {
        const line = Math.min(Math.max(0, p.line), lines.length - 1);
        const character = Math.min(Math.max(0, p.character), lines[line].length);
        return new Position(line, character);
      },
      offsetAt: () => 0,
      positionAt: () => new Position(0, 0),
      save: async () => true,
    };
  }

  async function openTextDocument(arg) {
    let uri = arg;
    if (typeof arg === "string") uri = Uri.file(arg);
    if (uri && !(uri instanceof Uri) && uri.content !== undefined) {
      return makeDocument(new Uri("untitled", "", "/Untitled"), uri.content, uri.language ?? "plaintext");
    }
    const existing = host.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (existing) return existing;
    let text;
    let languageId = "markdown";
    if (uri.scheme === "file") text = fs.readFileSync(uri.fsPath, "utf8");
    else {
      const provider = host.contentProviders.get(uri.scheme);
      if (!provider) throw new Error(`no content provider for ${uri.scheme}`);
      text = await provider.provideTextDocumentContent(uri, new CancellationTokenSource().token);
      languageId = "plaintext";
    }
    const doc = makeDocument(uri, text, languageId);
    host.textDocuments.push(doc);
    host.openDocEmitter.fire(doc);
    return doc;
  }

  function answer(level, m, items) {
    items = items.filter((i) => typeof i === "string");
    host.messages.push({ level, m, items });
    events.emit("message", m);
    return host.respond ? host.respond(level, m, items) : undefined;
  }

  const window = namespace("window", {
    activeTextEditor: undefined,
    visibleTextEditors: [],
    tabGroups: { all: [], onDidChangeTabs: () => disposable(), onDidChangeTabGroups: () => disposable() },
    onDidChangeActiveTextEditor: host.activeEditorEmitter.event,
    onDidChangeTextEditorSelection: host.selectionEmitter.event,
    createTreeView(id, options) {
      const visibility = new EventEmitter();
      const view = {
        id,
        provider: options.treeDataProvider,
        visible: true,
        message: undefined,
        description: undefined,
        onDidChangeVisibility: visibility.event,
        /** The rendered rows: getTreeItem of each root child. */
        async items() {
          const rows = await view.provider.getChildren(undefined);
          return Promise.all(rows.map((r) => view.provider.getTreeItem(r)));
        },
        setVisible(v) {
          view.visible = v;
          visibility.fire({ visible: v });
        },
        dispose() {
          host.treeViews.delete(id);
        },
      };
      host.treeViews.set(id, view);
      return view;
    },
    onDidChangeVisibleTextEditors: () => disposable(),
    createOutputChannel(name, options) {
      const level = (l) => (v) => host.output.push(`[${l}] ${v}\n`);
      const ch = {
        name,
        append: (v) => host.output.push(v),
        appendLine: (v) => host.output.push(v + "\n"),
        replace: () => {},
        clear: () => {},
        show: () => {},
        hide: () => {},
        dispose: () => {},
        ...(options && options.log
          ? { trace: level("trace"), debug: level("debug"), info: level("info"), warn: level("warning"), error: level("error") }
          : {}),
        logLevel: 2,
        onDidChangeLogLevel: () => disposable(),
      };
      return ch;
    },
    createStatusBarItem(id) {
      const item = { id, text: "", tooltip: "", command: undefined, show() {}, hide() {}, dispose() {} };
      const proxy = new Proxy(item, {
        set(t, k, v) {
          t[k] = v;
          if (k === "text") events.emit("status", v);
          return true;
        },
      });
      host.statusItems.push(proxy);
      return proxy;
    },
    createQuickPick() {
      const e = { value: new EventEmitter(), accept: new EventEmitter(), hide: new EventEmitter(), button: new EventEmitter(), itemButton: new EventEmitter(), active: new EventEmitter(), selection: new EventEmitter() };
      const qp = {
        title: "", placeholder: "", busy: false, matchOnDescription: true, matchOnDetail: true, ignoreFocusOut: false,
        value: "", selectedItems: [], activeItems: [], buttons: [], visible: false, _items: [],
        get items() {
          return this._items;
        },
        set items(v) {
          this._items = v;
          this.activeItems = v.slice(0, 1);
          events.emit("items", qp, v);
        },
        onDidChangeValue: e.value.event,
        onDidAccept: e.accept.event,
        onDidHide: e.hide.event,
        onDidTriggerButton: e.button.event,
        onDidTriggerItemButton: e.itemButton.event,
        onDidChangeActive: e.active.event,
        onDidChangeSelection: e.selection.event,
        show() {
          qp.visible = true;
          events.emit("quickPick", qp);
        },
        hide() {
          if (!qp.visible) return;
          qp.visible = false;
          e.hide.fire();
        },
        dispose() {},
        // test helpers
        type(v) {
          qp.value = v;
          e.value.fire(v);
        },
        accept(item) {
          qp.selectedItems = [item];
          e.accept.fire();
        },
        clickItemButton(item, button) {
          e.itemButton.fire({ item, button });
        },
      };
      host.quickPicks.push(qp);
      return qp;
    },
    async showTextDocument(docOrUri, options = {}) {
      const doc = docOrUri instanceof Uri ? await openTextDocument(docOrUri) : docOrUri;
      const editor = {
        document: doc,
        selection: new Selection(0, 0, 0, 0),
        selections: [],
        viewColumn: options.viewColumn ?? 1,
        options,
        revealed: [],
        revealRange(range, type) {
          editor.revealed.push({ range, type });
        },
        async edit(build) {
          const inserts = [];
          build({ insert: (position, text) => inserts.push({ position, text }), replace: (range, text) => inserts.push({ range, text }), delete() {} });
          host.edits.push({ editor, inserts });
          return true;
        },
      };
      host.openedEditors.push(editor);
      window.activeTextEditor = editor;
      window.visibleTextEditors = [editor];
      events.emit("editor", editor);
      host.activeEditorEmitter.fire(editor);
      return editor;
    },
    // A test answers a message by setting host.respond(level, message, items) => item.
    showInformationMessage: async (m, ...items) => answer("info", m, items),
    showWarningMessage: async (m, ...items) => answer("warning", m, items),
    showErrorMessage: async (m, ...items) => answer("error", m, items),
    showWorkspaceFolderPick: async () => folders[0],
    setStatusBarMessage: (m) => (host.messages.push({ level: "status", m }), disposable()),
    withProgress: async (_o, task) => task({ report() {} }, new CancellationTokenSource().token),
  });

  const workspace = namespace("workspace", {
    workspaceFolders: folders,
    name: folders[0]?.name,
    get textDocuments() {
      return host.textDocuments;
    },
    notebookDocuments: [],
    getConfiguration(section) {
      const get = (key, def) => {
        const full = section ? `${section}.${key}` : key;
        return full in host.settings ? host.settings[full] : def;
      };
      return { get, has: (k) => (section ? `${section}.${k}` : k) in host.settings, inspect: () => undefined, update: async () => {} };
    },
    getWorkspaceFolder: (uri) => folders.find((f) => uri.fsPath.startsWith(f.uri.fsPath)),
    onDidChangeConfiguration: host.configEmitter.event,
    onDidOpenTextDocument: host.openDocEmitter.event,
    onDidCloseTextDocument: () => disposable(),
    onDidChangeTextDocument: () => disposable(),
    onDidSaveTextDocument: () => disposable(),
    onWillSaveTextDocument: () => disposable(),
    onDidChangeWorkspaceFolders: () => disposable(),
    onDidOpenNotebookDocument: () => disposable(),
    onDidCloseNotebookDocument: () => disposable(),
    onDidChangeNotebookDocument: () => disposable(),
    onDidSaveNotebookDocument: () => disposable(),
    createFileSystemWatcher: () => ({ onDidCreate: host.createdEmitter.event, onDidChange: () => disposable(), onDidDelete: () => disposable(), dispose() {} }),
    registerTextDocumentContentProvider(scheme, provider) {
      host.contentProviders.set(scheme, provider);
      return disposable();
    },
    openTextDocument,
    applyEdit: async () => true,
  });

  const languages = namespace("languages", {
    match(selector, doc) {
      const sels = Array.isArray(selector) ? selector : [selector];
      return sels.some((s) => (typeof s === "string" ? s === doc.languageId : (!s.language || s.language === doc.languageId) && (!s.scheme || s.scheme === doc.uri.scheme))) ? 10 : 0;
    },
    registerHoverProvider(selector, provider) {
      host.hoverProviders.push({ selector, provider });
      return disposable();
    },
    // The link features the language client registers from the server's capabilities.
    registerCompletionItemProvider(selector, provider, ...triggerCharacters) {
      host.completionProviders.push({ selector, provider, triggerCharacters });
      return disposable();
    },
    registerDefinitionProvider(selector, provider) {
      host.definitionProviders.push({ selector, provider });
      return disposable();
    },
    registerDocumentLinkProvider(selector, provider) {
      host.documentLinkProviders.push({ selector, provider });
      return disposable();
    },
    registerWorkspaceSymbolProvider(provider) {
      host.symbolProviders.push(provider);
      return disposable();
    },
    setTextDocumentLanguage: async (doc, languageId) => ((doc.languageId = languageId), doc),
    createDiagnosticCollection: () => ({ set() {}, delete() {}, clear() {}, dispose() {}, forEach() {}, get() {}, has: () => false }),
  });

  const commands = namespace("commands", {
    registerCommand(id, fn) {
      host.commands.set(id, fn);
      return new Disposable(() => host.commands.delete(id));
    },
    async executeCommand(id, ...args) {
      const fn = host.commands.get(id);
      if (fn) return fn(...args);
      host.messages.push({ level: "command", m: id, items: args });
      return undefined;
    },
    getCommands: async () => [...host.commands.keys()],
  });

  const vscode = namespace("vscode", {
    version: "1.99.0-fake",
    env: namespace("env", { appName: "Fake VS Code (kbls tests)", language: "en", machineId: "test", sessionId: "test", uriScheme: "vscode", openExternal: async () => true }),
    extensions: namespace("extensions", { getExtension: () => undefined, all: [], onDidChange: () => disposable() }),
    window,
    workspace,
    languages,
    commands,
    Disposable,
    EventEmitter,
    Uri,
    Position,
    Range,
    Selection,
    Location,
    MarkdownString,
    Hover,
    SymbolInformation,
    SymbolKind,
    ThemeIcon,
    ThemeColor,
    TreeItem,
    CompletionItem,
    CompletionList,
    TextEdit,
    DocumentLink,
    SnippetString,
    CompletionItemKind: numbered(),
    CompletionItemTag: { Deprecated: 1 },
    TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
    CancellationError,
    CancellationTokenSource,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ViewColumn: { Active: -1, Beside: -2, One: 1, Two: 2 },
    TextEditorRevealType: { Default: 0, InCenter: 1, InCenterIfOutsideViewport: 2, AtTop: 3 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
    ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
    UIKind: { Desktop: 1, Web: 2 },
  });
  host.vscode = vscode;
  /** Moves the cursor of `editor` as a user would (fires onDidChangeTextEditorSelection). */
  host.moveCursor = (editor, line, character = 0) => {
    editor.selection = new Selection(line, character, line, character);
    host.selectionEmitter.fire({ textEditor: editor, selections: [editor.selection], kind: 2 });
  };
  host.fireConfigChange = (keys) => host.configEmitter.fire({ affectsConfiguration: (k) => keys.some((x) => x === k || x.startsWith(k + ".")) });
  return host;
}

/** Makes `require("vscode")` return `host.vscode` for modules loaded after this call. */
function installVscode(host) {
  const Module = require("node:module");
  const original = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    if (request === "vscode") return "vscode";
    return original.call(this, request, ...rest);
  };
  require.cache.vscode = { id: "vscode", filename: "vscode", loaded: true, exports: host.vscode };
  return () => {
    Module._resolveFilename = original;
    delete require.cache.vscode;
  };
}

module.exports = { createHost, installVscode, Uri, Position, Range, Selection, CancellationTokenSource };
