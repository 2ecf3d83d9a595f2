// What the language client tells the server and asks it: only the notes and workspace folders
// kbls is enabled for (optInGate.ts) reach the server, in the initialize request and after it.
import * as vscode from "vscode";
import type { InitializeParams, LanguageClientOptions, ServerOptions, StaticFeature } from "vscode-languageclient/node";
import { referencesWithoutOverlap } from "./markdownOverlap";
import type { ServerCommand } from "./serverLocator";

/** How to run the located server; debugging the extension (F5) also turns the server's log up. */
export function serverOptions(located: ServerCommand, cwd: string | undefined): ServerOptions {
  const run = { command: located.command, args: located.args, options: { cwd, env: { ...process.env } } };
  return { run, debug: { ...run, args: [...run.args, "--log-level", "debug"] } };
}

/** The client's options: markdown notes of enabled folders only, hovers as the setting says. */
export function clientOptions(
  output: vscode.LogOutputChannel,
  initializationOptions: object,
  folderEnabled: (folder: vscode.Uri) => boolean,
): LanguageClientOptions {
  const enabled = (uri: string): boolean => folderEnabled(vscode.Uri.parse(uri));
  const inEnabled = (uri: vscode.Uri): boolean => {
    const f = vscode.workspace.getWorkspaceFolder(uri);
    return f !== undefined && folderEnabled(f.uri);
  };
  return {
    documentSelector: [{ scheme: "file", language: "markdown" }],
    outputChannel: output,
    initializationOptions,
    markdown: { isTrusted: false, supportHtml: false },
    // Only the notes of enabled folders go to the server and get its hovers.
    middleware: {
      didOpen: (document, next) => (inEnabled(document.uri) ? next(document) : Promise.resolve()),
      didChange: (event, next) => (inEnabled(event.document.uri) ? next(event) : Promise.resolve()),
      didSave: (document, next) => (inEnabled(document.uri) ? next(document) : Promise.resolve()),
      didClose: (document, next) => (inEnabled(document.uri) ? next(document) : Promise.resolve()),
      provideHover: (document, position, token, next) =>
        inEnabled(document.uri) && vscode.workspace.getConfiguration("kbls", document.uri).get<boolean>("hover.enabled", true)
          ? next(document, position, token)
          : undefined,
      // Link completion, definition and document links: the client registers them from the
      // server's capabilities; a note outside the enabled folders is not asked about.
      provideCompletionItem: (document, position, context, token, next) =>
        inEnabled(document.uri) ? next(document, position, context, token) : undefined,
      provideDefinition: (document, position, token, next) => (inEnabled(document.uri) ? next(document, position, token) : undefined),
      provideDocumentLinks: (document, token, next) => (inEnabled(document.uri) ? next(document, token) : undefined),
      // VS Code's own markdown extension gives every note its outline and folding: kbls's would
      // list each heading twice (Neovim gets kbls's; docs/vscode.md).
      provideDocumentSymbols: () => undefined,
      provideFoldingRanges: () => undefined,
      provideCodeLenses: (document, token, next) =>
        inEnabled(document.uri) && vscode.workspace.getConfiguration("kbls", document.uri).get<boolean>("codeLens.enabled", true)
          ? next(document, token)
          : undefined,
      // References: each link once, though VS Code's markdown server lists its markdown links too.
      provideReferences: (document, position, options, token, next) =>
        inEnabled(document.uri) ? referencesWithoutOverlap(document, position, options, token, next) : undefined,
      workspace: {
        // The server indexes the folders it is told about: only the enabled ones.
        workspaceFolders: async (token, next) => {
          const folders = await next(token);
          return Array.isArray(folders) ? folders.filter((f) => enabled(f.uri)) : folders;
        },
        didChangeWorkspaceFolders: (event, next) =>
          next({
            added: event.added.filter((f) => folderEnabled(f.uri)),
            removed: event.removed.filter((f) => folderEnabled(f.uri)),
          }),
      },
    },
  };
}

/**
 * Runs last among the client's features: the initialize request names only the enabled folders
 * (the client's own folder feature lists every folder of the workspace).
 */
export class EnabledFoldersOnly implements StaticFeature {
  constructor(private readonly folderEnabled: (folder: vscode.Uri) => boolean) {}

  fillInitializeParams(params: InitializeParams): void {
    const folders = (params.workspaceFolders ?? []).filter((f) => this.folderEnabled(vscode.Uri.parse(f.uri)));
    params.workspaceFolders = folders;
    if (folders.length > 0) {
      params.rootUri = folders[0].uri;
      params.rootPath = vscode.Uri.parse(folders[0].uri).fsPath;
    }
  }

  fillClientCapabilities(): void {}

  initialize(): void {}

  getState(): { kind: "static" } {
    return { kind: "static" };
  }

  clear(): void {}
}
