// A team store (`store: postgresql://…`) reaches a host the settings name: only the user's own
// settings may choose it, never a cloned repository's .vscode/settings.json (the server likewise
// refuses one from a workspace's .kbls.yaml unless KBLS_TRUSTED_STORES names the host).

export interface StoreChoice {
  /** the initializationOptions to send: the merged settings, with the user's own `store` or none. */
  options: Record<string, unknown>;
  /** the `store` a workspace or folder setting asked for, left out; undefined when none was. */
  ignored: unknown;
}

/** `merged` (what `getConfiguration("kbls").get("initializationOptions")` gives) with its `store`
 *  taken from `userValue` (the setting's `globalValue` in `inspect`) only. */
export function withUsersStore(merged: object, userValue: object | undefined): StoreChoice {
  const all = merged as Record<string, unknown>;
  const own = (userValue as Record<string, unknown> | undefined)?.store;
  if (all.store === own) {
    return { options: all, ignored: undefined };
  }
  const { store, ...rest } = all;
  return { options: own === undefined ? rest : { ...rest, store: own }, ignored: store };
}
