// What the Related Notes view shows and writes, free of `vscode` so node:test covers it: a row per
// `kb/related` hit (title, why it is related, score), the link "Insert link here" writes (a
// relative markdown link or a wiki link, in the style the note already uses), and the text of a
// selection turned into a query.
import { normalizeQuery, type Hit } from "./protocol";
import { basename, oneLine, prettyCrumb, sectionOf } from "./searchPicker";

export interface RelatedRow {
  /** The score and the note's title (the file name when it has none): "0.74 · Borrowing". */
  label: string;
  /** Why it is related, short: "§ Moves · links here". */
  description: string;
  /** The full reasons, the section, the path and the snippet. */
  tooltip: string;
  hit: Hit;
}

/**
 * A reason as the server words it in a word or two: `similar to § Moves` is the section ("§ Moves"),
 * `similar in meaning` "similar", `shared tags: a, b` "shared tags".
 */
export function shortReason(reason: string): string {
  if (reason.startsWith("similar to ")) return reason.slice("similar to ".length).replace(/ > /g, " › ");
  if (reason.startsWith("similar")) return "similar";
  if (reason.startsWith("shared tags")) return "shared tags";
  return reason;
}

/** The reasons in a word or two each; a link each way reads "links both ways". */
export function shortReasons(reasons: readonly string[]): string[] {
  const short = [...new Set(reasons.map(shortReason))];
  const both = short.includes("links here") && short.includes("linked from here");
  return both ? short.filter((r) => r !== "linked from here").map((r) => (r === "links here" ? "links both ways" : r)) : short;
}

export function relatedRow(hit: Hit): RelatedRow {
  const title = hit.title?.trim() || basename(hit.path || hit.uri);
  const score = Number.isFinite(hit.score) ? hit.score.toFixed(2) : "";
  // The score leads the label: the side bar cuts a row's end (a long title, then the
  // description), never its start. The reasons follow in the description and whole in the tooltip.
  const label = score ? `${score} · ${title}` : title;
  const description = shortReasons(hit.reasons ?? []).join(" · ");
  const section = prettyCrumb(sectionOf(title, hit.breadcrumb ?? ""));
  const lines = [section ? `${title} › ${section}` : title, hit.path || hit.uri, `score ${score}`, ...(hit.reasons ?? [])];
  const snippet = oneLine(hit.snippet ?? "", 300);
  if (snippet) lines.push("", snippet);
  return { label, description, tooltip: lines.join("\n"), hit };
}

export function relatedRows(hits: readonly Hit[]): RelatedRow[] {
  return hits.map(relatedRow);
}

export const LINK_STYLES = ["auto", "markdown", "wiki"] as const;
export type LinkStyle = (typeof LINK_STYLES)[number];

/**
 * The style of a note's own links: "wiki" when it has more `[[…]]` links than relative markdown
 * links to notes, else "markdown" (also for a note without links).
 */
export function detectLinkStyle(text: string): "markdown" | "wiki" {
  const wiki = (text.match(/\[\[[^\]\n]+\]\]/g) ?? []).length;
  const markdown = (text.match(/\]\((?![a-z][\w+.-]*:)[^)\s]+\.(?:md|markdown)(?:#[^)\s]*)?\)/gi) ?? []).length;
  return wiki > markdown ? "wiki" : "markdown";
}

/** The decoded path of a file URI ("/home/me/notes/a b.md"). */
function uriPath(uri: string): string {
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return uri;
  }
}

/** `to` relative to the folder of `from`, both absolute posix paths. */
export function relativePath(from: string, to: string): string {
  const a = from.split("/").slice(0, -1).filter(Boolean);
  const b = to.split("/").filter(Boolean);
  let i = 0;
  while (i < a.length && i < b.length - 1 && a[i] === b[i]) i++;
  return [...a.slice(i).map(() => ".."), ...b.slice(i)].join("/");
}

/** Brackets and pipes would end the link early: they are left out of a label. */
function cleanLabel(text: string): string {
  return text.replace(/[[\]|\n\r]+/g, " ").replace(/\s+/g, " ").trim();
}

/**
 * The link to `hit`'s note written into the note at `fromUri`:
 * - markdown: `[Title](../dir/note.md)`, the path relative to that note, spaces and parentheses escaped;
 * - wiki: `[[dir/note|Title]]` (the path without extension inside the root resolves one note
 *   even where two share a stem), `[[note]]` when the title is the stem.
 */
export function linkText(hit: Hit, fromUri: string, style: "markdown" | "wiki"): string {
  const title = cleanLabel(hit.title?.trim() || basename(hit.path || hit.uri).replace(/\.[^.]+$/, ""));
  if (style === "wiki") {
    const name = (hit.path || basename(uriPath(hit.uri))).replace(/\\/g, "/").replace(/\.(md|markdown|txt|rst)$/i, "");
    const target = cleanLabel(name);
    return target === title || basename(target) === title ? `[[${target}]]` : `[[${target}|${title}]]`;
  }
  const rel = relativePath(uriPath(fromUri), uriPath(hit.uri));
  const escaped = rel.replace(/ /g, "%20").replace(/\(/g, "%28").replace(/\)/g, "%29");
  return `[${title}](${escaped})`;
}

/** The style a link is written in: the setting, or for "auto" the note's own. */
export function chooseLinkStyle(setting: string, noteText: string): "markdown" | "wiki" {
  if (setting === "markdown" || setting === "wiki") return setting;
  return detectLinkStyle(noteText);
}

/** A selection as a search query: one line, whitespace collapsed, cut to the server's cap. */
export function selectionQuery(text: string): string {
  return normalizeQuery(text.replace(/\s+/g, " "));
}
