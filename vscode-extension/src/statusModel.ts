// What the status-bar item and KB: Show Status display, computed from server events without
// touching `vscode`, so node:test covers it. `statusBar.ts` renders it.
import type { IndexStatusNotification, StatusResult } from "./protocol";

export type ServerPhase = "starting" | "running" | "stopped" | "notFound" | "failed" | "installing";

export interface ProgressState {
  title?: string;
  message?: string;
  percentage?: number;
}

export interface StatusSnapshot {
  phase: ServerPhase;
  /** Open `$/progress` operations by token. */
  progress: Map<string, ProgressState>;
  index?: IndexStatusNotification;
  /** Notes indexed, from `kb/indexStatus` or `kb/status`. */
  files?: number;
  chunks?: number;
  detail?: string;
}

export interface StatusView {
  text: string;
  tooltip: string;
  busy: boolean;
  warning: boolean;
}

export function emptySnapshot(): StatusSnapshot {
  return { phase: "starting", progress: new Map() };
}

export function plural(n: number, one: string, many = one + "s"): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** Applies one `$/progress` value (`begin` / `report` / `end`). */
export function applyProgress(s: StatusSnapshot, token: string, value: { kind: string } & ProgressState): void {
  if (value.kind === "end") {
    s.progress.delete(token);
    return;
  }
  const prev = s.progress.get(token) ?? {};
  s.progress.set(token, {
    title: value.title ?? prev.title,
    message: value.message ?? prev.message,
    percentage: value.percentage ?? prev.percentage,
  });
}

export function applyIndexStatus(s: StatusSnapshot, n: IndexStatusNotification): void {
  s.index = n;
  // Ready with nothing queued: no indexing is under way, whatever progress report was missed.
  if (n.state === "ready" && n.pending === 0) s.progress.clear();
  if (typeof n.files === "number") s.files = n.files;
  if (typeof n.chunks === "number") s.chunks = n.chunks;
}

export function applyStatusResult(s: StatusSnapshot, r: StatusResult): void {
  const files = r.roots.reduce((a, root) => a + root.files, 0);
  const chunks = r.roots.reduce((a, root) => a + root.chunks, 0);
  s.files = files;
  s.chunks = chunks;
  s.index = {
    state: r.state, pending: r.queue, files, chunks, message: s.index?.message ?? "", error: r.error,
    waiting: r.waiting, embedded: r.embedded, rate: r.rate, etaSeconds: r.etaSeconds,
  };
  if (r.state === "ready" && r.queue === 0) s.progress.clear();
}

export function renderStatus(s: StatusSnapshot): StatusView {
  const click = "\n\nClick for KB: Show Status.";
  switch (s.phase) {
    case "notFound":
      return {
        text: "$(warning) KB: no server",
        tooltip: (s.detail ?? "The kbls server was not found.") + "\n\nClick for KB: Show Status.",
        busy: false,
        warning: true,
      };
    case "failed":
      return {
        text: "$(error) KB: server stopped",
        tooltip: (s.detail ?? "The kbls server failed.") + "\n\nRun KB: Restart Server to try again.",
        busy: false,
        warning: true,
      };
    case "stopped":
      return { text: "$(circle-slash) KB: stopped", tooltip: "The kbls server is not running." + click, busy: false, warning: false };
    case "installing":
      return {
        text: "$(sync~spin) KB: installing server",
        tooltip: (s.detail ?? "Installing the kbls server into the extension's own environment…") + click,
        busy: true,
        warning: false,
      };
    case "starting":
      return { text: "$(sync~spin) KB: starting", tooltip: "Starting the kbls server…" + click, busy: true, warning: false };
    case "running":
      break;
  }

  const embedding = embeddingView(s.index, click);
  if (embedding) return embedding;
  const open = [...s.progress.values()];
  if (open.length > 0) {
    const p = open[open.length - 1];
    const pct = typeof p.percentage === "number" ? ` ${Math.round(p.percentage)}%` : "";
    const msg = p.message ? ` (${p.message})` : "";
    return {
      text: `$(sync~spin) KB: indexing${pct}`,
      tooltip: `${p.title ?? "Indexing"}${pct}${msg}` + click,
      busy: true,
      warning: false,
    };
  }

  const idx = s.index;
  if (idx && idx.state === "indexing") {
    const pending = idx.pending > 0 ? ` (${idx.pending} left)` : "";
    return {
      text: `$(sync~spin) KB: indexing${pending}`,
      tooltip: `Indexing${idx.message ? ": " + idx.message : ""}, ${plural(idx.pending, "file")} queued.` + click,
      busy: true,
      warning: false,
    };
  }
  if (idx && idx.state === "loading") {
    return {
      text: "$(sync~spin) KB: loading model",
      tooltip: "The embedding model is loading; searches are lexical only until it is ready." + click,
      busy: true,
      warning: false,
    };
  }
  if (idx && idx.state === "error") {
    return {
      text: "$(warning) KB: index error",
      tooltip: `The index reported an error${idx.error || idx.message ? ": " + (idx.error || idx.message) : ""}.` + click,
      busy: false,
      warning: true,
    };
  }
  if (typeof s.files === "number") {
    const chunks = typeof s.chunks === "number" ? `, ${plural(s.chunks, "chunk")}` : "";
    return {
      text: `$(book) KB: ${plural(s.files, "note")}`,
      tooltip: `kbls index ready: ${plural(s.files, "note")}${chunks}.` + click,
      busy: false,
      warning: false,
    };
  }
  // Running, but neither progress nor a count has arrived yet.
  return { text: "$(sync~spin) KB: starting", tooltip: "The kbls server is running; waiting for the index state…" + click, busy: true, warning: false };
}

/** "45s", "3m05s", "1h02m" (as `kbls index` prints it). */
export function duration(seconds: number): string {
  const t = Math.max(0, Math.round(seconds));
  if (t < 60) return `${t}s`;
  if (t < 3600) return `${Math.floor(t / 60)}m${String(t % 60).padStart(2, "0")}s`;
  return `${Math.floor(t / 3600)}h${String(Math.floor((t % 3600) / 60)).padStart(2, "0")}m`;
}

/** The embedding pass (every note written, vectors following): share, chunks left, rate, ETA. */
function embeddingView(idx: IndexStatusNotification | undefined, click: string): StatusView | undefined {
  if (!idx || !idx.waiting || idx.state === "error") return undefined;
  const pct = Math.floor(100 * (idx.embedded ?? 0));
  const eta = typeof idx.etaSeconds === "number" ? ` · ETA ${duration(idx.etaSeconds)}` : "";
  const rate = idx.rate ? `, ${idx.rate.toFixed(1)} chunks/s` : "";
  return {
    text: `$(sync~spin) KB: embedding ${pct}%${eta}`,
    tooltip:
      `Every note is searchable by its words; ${plural(idx.waiting, "chunk")} of ${plural(idx.chunks, "chunk")} ` +
      `wait for their vectors (${pct}% embedded${rate}${eta ? ", about " + eta.slice(7) + " left" : ""}). ` +
      `Searches by meaning cover the embedded share meanwhile.` + click,
    busy: true,
    warning: false,
  };
}

export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return "?";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v >= 10 ? 0 : 1)} ${units[u]}`;
}

function uriToDisplayPath(uri: string): string {
  if (!uri.startsWith("file://")) return uri;
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return uri;
  }
}

function mdEscape(text: string): string {
  return text.replace(/([\\`*_[\]|<>])/g, "\\$1");
}

/** `kb/status` as a readable markdown document (KB: Show Status). */
export function formatStatusMarkdown(r: StatusResult, extra: { command?: string } = {}): string {
  const lines: string[] = [];
  const files = r.roots.reduce((a, x) => a + (x.files ?? 0), 0);
  const chunks = r.roots.reduce((a, x) => a + (x.chunks ?? 0), 0);
  lines.push(`# kbls status`, "");
  lines.push(`- **State:** ${r.state}${r.queue > 0 ? ` (${plural(r.queue, "file")} queued)` : ""}`);
  lines.push(`- **Indexed:** ${plural(files, "note")}, ${plural(chunks, "chunk")} in ${plural(r.roots.length, "root")}`);
  lines.push(`- **Model:** ${mdEscape(r.model)} (${r.dimension} dimensions)`);
  lines.push(
    `- **Since start:** ${plural(r.embeddedSinceStart, "chunk")} embedded, ${plural(r.reusedSinceStart, "chunk")} reused`,
  );
  lines.push(`- **Server:** kbls ${mdEscape(r.version)}`);
  if (r.error) lines.push(`- **Error:** ${mdEscape(r.error)}`);
  if (extra.command) lines.push(`- **Command:** \`${extra.command.replace(/`/g, "'")}\``);
  for (const root of r.roots) {
    lines.push("", `## ${mdEscape(uriToDisplayPath(root.uri))}`, "");
    // why the root is refused (its .kbls.yaml) or its indexing fails
    if (root.error) lines.push(`- **Problem:** ${mdEscape(root.error)}`);
    lines.push(`- **Notes:** ${root.files}, **chunks:** ${root.chunks}`);
    lines.push(`- **Store:** ${mdEscape(root.store)} (${formatBytes(root.storeBytes)})`);
    lines.push(`- **Model:** ${mdEscape(root.model)} (${root.dimension} dimensions)`);
    if (root.sqlite) {
      const sq = root.sqlite;
      const parts = [sq.module, sq.version].filter(Boolean).join(" ");
      lines.push(`- **SQLite:** ${mdEscape(parts || "?")}${sq.vec ? `, sqlite-vec ${mdEscape(sq.vec)}` : ""}`);
    }
    const errors = root.errors ?? [];
    lines.push("", errors.length === 0 ? "No indexing errors." : `**${plural(errors.length, "file")} could not be indexed:**`);
    for (const e of errors) lines.push(`- \`${e.path.replace(/`/g, "'")}\`: ${mdEscape(e.reason)}`);
  }
  lines.push("");
  return lines.join("\n");
}
