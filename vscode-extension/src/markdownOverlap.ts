// kbls and VS Code's built-in markdown language server both answer references in a note: the
// built-in one finds the markdown links (`[x](note.md)`, `[x](note.md#heading)`) to a heading it
// is asked on, or to the file of a markdown link, and kbls finds those too (with wiki links,
// aliases and tags). Each link must be listed once: kbls's answer leaves out every location the
// built-in server also gives (same file, overlapping range; its ranges are the link's path, ours
// the whole link) and carries the built-in server's own locations instead, exactly as it gave
// them. VS Code's references list drops a location given twice with the same range, so where the
// built-in server answered VS Code too each link shows once; where it answered VS Code before it
// had read the workspace (nothing, right after a folder opens) its links still show.
import * as vscode from "vscode";

/** The built-in markdown extension (it can be disabled, then kbls answers everything). */
const BUILTIN_MARKDOWN = "vscode.markdown-language-features";

/** While kbls asks the other providers, its own provider (also asked) answers nothing. */
let askingOthers = 0;

type ReferencesNext = (
  document: vscode.TextDocument,
  position: vscode.Position,
  context: { includeDeclaration: boolean },
  token: vscode.CancellationToken,
) => vscode.ProviderResult<vscode.Location[]>;

/** `middleware.provideReferences`: kbls's references without those another provider gives. */
export async function referencesWithoutOverlap(
  document: vscode.TextDocument,
  position: vscode.Position,
  context: { includeDeclaration: boolean },
  token: vscode.CancellationToken,
  next: ReferencesNext,
): Promise<vscode.Location[] | null | undefined> {
  if (askingOthers > 0) return [];
  const ours = await next(document, position, context, token);
  if (!ours || ours.length === 0 || !vscode.extensions.getExtension(BUILTIN_MARKDOWN)) return ours;
  askingOthers++;
  let others: vscode.Location[] = [];
  try {
    others = (await vscode.commands.executeCommand<vscode.Location[]>("vscode.executeReferenceProvider", document.uri, position)) ?? [];
  } finally {
    askingOthers--;
  }
  const overlaps = (a: vscode.Location, b: vscode.Location) => sameFile(a.uri, b.uri) && a.range.intersection(b.range) !== undefined;
  // All the built-in server's locations are carried, not only the overlapping ones: VS Code may
  // have had its own answer before that server had read the workspace. The command asks with the
  // declaration included, so without it the headings it names are left out here.
  const carried = context.includeDeclaration ? others : await withoutHeadings(others);
  return [...carried, ...ours.filter((loc) => !others.some((o) => overlaps(o, loc)))];
}

/** The locations that are not on an ATX heading line (the built-in server's declarations). */
async function withoutHeadings(locations: vscode.Location[]): Promise<vscode.Location[]> {
  const kept: vscode.Location[] = [];
  for (const loc of locations) {
    const doc = await Promise.resolve(vscode.workspace.openTextDocument(loc.uri)).catch(() => undefined);
    const line = doc && loc.range.start.line < doc.lineCount ? doc.lineAt(loc.range.start.line).text : "";
    if (!/^ {0,3}#{1,6}(\s|$)/.test(line)) kept.push(loc);
  }
  return kept;
}

function sameFile(a: vscode.Uri, b: vscode.Uri): boolean {
  return a.scheme === b.scheme && a.fsPath === b.fsPath;
}
