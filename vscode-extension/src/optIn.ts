// Whether kbls may index a workspace folder: always where the folder has a `.kbls.yaml`,
// otherwise only after the user said yes once. The answer is remembered per folder ("yes" and
// "never" across sessions, "not now" for this session only), so the question is asked at most
// once per folder. `optInGate.ts` asks it in VS Code; this module only decides. No `vscode`.

export const CONFIG_FILE = ".kbls.yaml";

/** What KB: Enable for this folder writes: every key is optional, the server's defaults apply. */
export const MINIMAL_CONFIG = [
  "# kbls indexes the notes under this folder (written by KB: Enable for this folder).",
  "# Every key is optional: include, exclude, store, model, chunk, search.",
  "# See https://github.com/kbls/kbls/blob/main/docs/configuration.md",
  "",
].join("\n");

export const QUESTION = "Index the notes in this folder with kbls?";
export const Choices = { yes: "Yes", notNow: "Not now", never: "Never for this folder" } as const;
export type Choice = (typeof Choices)[keyof typeof Choices];

export type StoredAnswer = "yes" | "never";

/** enabled: start the service; ask: ask the question; declined/snoozed: stay quiet. */
export type FolderState = "enabled" | "ask" | "declined" | "snoozed";

/** The part of VS Code's `Memento` (globalState) this needs. */
export interface AnswerMemory {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

export function answerKey(folderUri: string): string {
  return `kbls.optIn:${folderUri.replace(/\/+$/, "")}`;
}

export function folderState(hasConfig: boolean, stored: StoredAnswer | undefined, snoozed: boolean): FolderState {
  if (hasConfig || stored === "yes") return "enabled";
  if (stored === "never") return "declined";
  return snoozed ? "snoozed" : "ask";
}

/** True for the documents that may prompt the question: markdown files on disk. */
export function isNoteDocument(doc: { languageId: string; uri: { scheme: string } }): boolean {
  return doc.languageId === "markdown" && doc.uri.scheme === "file";
}

export class OptIn {
  private readonly snoozed = new Set<string>();

  constructor(
    private readonly memory: AnswerMemory,
    /** Whether the folder (a file-system path) has a `.kbls.yaml`. */
    private readonly hasConfig: (folderPath: string) => Promise<boolean>,
  ) {}

  async state(folder: { uri: string; path: string }): Promise<FolderState> {
    const stored = this.memory.get<StoredAnswer>(answerKey(folder.uri));
    return folderState(await this.hasConfig(folder.path), stored, this.snoozed.has(folder.uri));
  }

  /** Records the user's choice; returns true when the folder is now enabled. */
  async record(folderUri: string, choice: Choice | undefined): Promise<boolean> {
    switch (choice) {
      case Choices.yes:
        await this.memory.update(answerKey(folderUri), "yes");
        return true;
      case Choices.never:
        await this.memory.update(answerKey(folderUri), "never");
        return false;
      default:
        // "Not now", or the notification dismissed: ask again in a later session.
        this.snoozed.add(folderUri);
        return false;
    }
  }

  /** KB: Enable for this folder overrides an earlier "never". */
  async enable(folderUri: string): Promise<void> {
    this.snoozed.delete(folderUri);
    await this.memory.update(answerKey(folderUri), "yes");
  }
}
