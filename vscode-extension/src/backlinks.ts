// KB: Show Backlinks (also the command of the "N backlinks · M related" code lens on a title):
// the notes linking to the current note (`kb/backlinks`) in a quick pick, each
// at its link, with the linking section and the words of its paragraph; the chosen one opens with
// the link selected. Find All References (Shift+Alt+F12) lists the same links, standard LSP.
import * as vscode from "vscode";
import type { KbClient } from "./client";
import * as kb from "./protocol";
import type { RelatedRow } from "./relatedItems";
import { parseBacklinksResult } from "./wireParse";

export const BACKLINKS_COMMAND = "kbls.showBacklinks";

interface BacklinkItem extends vscode.QuickPickItem {
  backlink: kb.Backlink;
}

/** The quick pick's row of one backlink. */
export function backlinkItem(b: kb.Backlink): BacklinkItem {
  return {
    label: b.title || b.path,
    description: `${b.path}:${b.range.start.line + 1}`,
    detail: b.breadcrumb && b.breadcrumb !== b.title ? `${b.breadcrumb.replace(/>/g, "›")} — ${b.context}` : b.context,
    backlink: b,
  };
}

/** The backlinks of the note at `uri` (throws what the request throws). */
export async function backlinksOf(conn: kb.RequestSender, uri: string): Promise<kb.BacklinksResult> {
  return parseBacklinksResult(await conn.sendRequest(kb.Methods.backlinks, kb.backlinksParams(uri)));
}

/** A backlink as a row of the Related Notes view (its "Backlinks" group): opens at the link. */
export function backlinkRow(b: kb.Backlink): RelatedRow {
  const hit: kb.Hit = {
    uri: b.uri, path: b.path, root: b.root, range: b.range, title: b.title, breadcrumb: b.breadcrumb,
    snippet: b.context, score: 0, signals: { semantic: null, lexical: null }, reasons: [], more: 0, sections: [], explain: null,
  };
  return {
    label: b.title || b.path,
    description: `${b.path}:${b.range.start.line + 1}`,
    tooltip: [b.breadcrumb.replace(/>/g, "›"), b.context, `${b.path}:${b.range.start.line + 1}`].filter(Boolean).join("\n\n"),
    hit,
  };
}

export function registerBacklinks(context: vscode.ExtensionContext, kbClient: KbClient): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(BACKLINKS_COMMAND, async (arg?: unknown) => {
      // From the palette: the active note; from the code lens on a title: its URI, as text.
      const uri =
        arg instanceof vscode.Uri ? arg : typeof arg === "string" ? vscode.Uri.parse(arg) : vscode.window.activeTextEditor?.document.uri;
      if (!uri || uri.scheme !== "file") {
        void vscode.window.showInformationMessage("KB: Show Backlinks works on a note that is open in the editor.");
        return;
      }
      const client = await kbClient.ready();
      if (!client) return;
      let result: kb.BacklinksResult;
      try {
        result = await backlinksOf(client, uri.toString());
      } catch (e) {
        void vscode.window.showErrorMessage(`KB: Show Backlinks: ${e instanceof Error ? e.message : String(e)}`);
        return;
      }
      const name = uri.path.split("/").pop() ?? uri.fsPath;
      if (result.backlinks.length === 0) {
        void vscode.window.showInformationMessage(`KB: no note links to ${name}.`);
        return;
      }
      const chosen = await vscode.window.showQuickPick(result.backlinks.map(backlinkItem), {
        title: `KB: Backlinks of ${name} (${result.notes} ${result.notes === 1 ? "note" : "notes"})`,
        matchOnDescription: true,
        matchOnDetail: true,
      });
      if (!chosen) return;
      const { start, end } = chosen.backlink.range;
      const selection = new vscode.Range(start.line, start.character, end.line, end.character);
      await vscode.window.showTextDocument(vscode.Uri.parse(chosen.backlink.uri), { selection });
    }),
  );
}
