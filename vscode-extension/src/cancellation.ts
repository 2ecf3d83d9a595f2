// A minimal cancellation source whose token has the shape both `vscode.CancellationToken` and
// vscode-jsonrpc's `CancellationToken.is` accept, so pure modules can cancel requests without
// importing `vscode`.
import type { CancellationTokenLike } from "./protocol";

type Listener = (e: unknown) => unknown;

export class CancellationSource {
  private cancelled = false;
  private readonly listeners = new Set<Listener>();
  readonly token: CancellationTokenLike;

  constructor() {
    const source = this;
    this.token = {
      get isCancellationRequested(): boolean {
        return source.cancelled;
      },
      onCancellationRequested(listener: Listener) {
        if (source.cancelled) {
          listener(undefined);
          return { dispose() {} };
        }
        source.listeners.add(listener);
        return { dispose: () => source.listeners.delete(listener) };
      },
    };
  }

  get isCancelled(): boolean {
    return this.cancelled;
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const l of listeners) {
      try {
        l(undefined);
      } catch {
        // One listener's failure must not keep the others from hearing the cancellation.
      }
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}
