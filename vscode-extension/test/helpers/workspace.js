// A sample knowledge base of a few notes on distinct topics, shared by the protocol and e2e tests.
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const NOTES = {
  "rust/ownership.md": `---
title: Ownership in Rust
tags: [rust, memory]
---
# Ownership in Rust

Every value in Rust has a single owner. When the owner goes out of scope, the value is dropped
and its memory is freed. See also [Borrowing](borrowing.md) for references.

## Moves

Assigning a \`String\` to another variable moves it: the first variable can no longer be used.
After a move, the new binding owns the heap data and the old one is invalid.

## Clone

Call \`.clone()\` to make a deep copy when you really need two owners of equal data.
`,
  "rust/borrowing.md": `---
title: Borrowing
tags: [rust, memory]
---
# Borrowing

A reference lets you use a value without taking ownership of it. See [Ownership](ownership.md).

## Mutable references

You can have only one mutable reference to a particular piece of data at a time, which
prevents data races at compile time.
`,
  "baking/sourdough.md": `---
title: Sourdough bread
tags: [baking]
---
# Sourdough bread

A sourdough starter is a culture of wild yeast and lactic acid bacteria kept in flour and water.

## Feeding the starter

Feed the starter twice a day with equal weights of flour and water so it stays bubbly and active.

## Baking

Bake the loaf in a preheated Dutch oven at 250 °C: twenty minutes with the lid on, then twenty
minutes without it until the crust is deep brown.
`,
  "travel/kyoto.md": `---
title: Kyoto trip
tags: [travel, japan]
---
# Kyoto trip

Temples, gardens and the bamboo grove of Arashiyama.

## Getting around

Buy a prepaid IC card for the city buses and the subway; the Shinkansen from Tokyo takes about
two hours and fifteen minutes.
`,
  "dev/git-rebase.md": `---
title: Git rebase
tags: [git]
---
# Git rebase

Rebasing replays your commits on top of another branch, giving a linear history.

## Interactive rebase

\`git rebase -i HEAD~3\` lets you squash, reorder or reword the last three commits before pushing.
`,
};

/**
 * A diary of two topics, for the Related Notes view that follows the cursor: each section's nearest
 * note is its topic's (bread, then Kyoto). Not in NOTES (the note counts of the suites stay 5):
 * `makeWorkspace(prefix, { diary: true })` adds it.
 */
const DIARY = {
  path: "journal/diary.md",
  text: `# Diary

## Monday

The starter in the jar on the kitchen shelf doubled overnight and smelled pleasantly sour. I fed
it equal weights of flour and water again, stirred until it was smooth and bubbly, and left the
dough to rise slowly in the fridge. Tomorrow morning it goes into the hot cast iron pot with the
lid on, and then without the lid until the crust turns deep brown and crackles.

## Tuesday

Booked the bullet train from Tokyo for the autumn holiday in the old imperial capital. The plan:
temples and quiet moss gardens in the morning, the bamboo forest at Arashiyama before the crowds,
and a prepaid travel card for the city buses and the subway so we never queue for tickets.
`,
};

/**
 * A long note of many sections that one question matches (issue 19 item 5: one note filled the
 * result list): KB: Search shows it once, its other sections behind "+N more sections". Not in
 * NOTES either: the suites that use it write it.
 */
const UNDO = {
  query: "how do I undo the last git commit",
  path: "dev/git undo.md",
  text: `# Git undo recipes

How to take back what git did, one recipe per section.

## Undo the last commit

To undo the last commit but keep its changes, run \`git reset --soft HEAD~1\`; the changes stay staged
and the commit is gone from the branch. Use \`--mixed\` to unstage them too, or \`--hard\` to throw the
changes away with the commit, which cannot be undone without the reflog.

## Undo a pushed commit

A commit already pushed is undone with \`git revert <sha>\`: git makes a new commit that undoes the old
one, so the history others pulled stays as it was. Reverting a merge commit needs \`-m 1\` to say which
parent to keep.

## Undo a rebase

After a rebase gone wrong, find the commit the branch pointed at before it with \`git reflog\`, then run
\`git reset --hard\` to that commit. The reflog keeps every position of the branch for ninety days, so
the commits are not lost.

## Undo an amend

An amended commit replaced the last commit with a new one; to undo the amend, reset to the previous
head that \`git reflog\` lists as \`HEAD@{1}\` with \`git reset --soft\`, and the amended changes come back
staged.
`,
};

/** Creates the workspace in a fresh temp folder and returns its path. */
function makeWorkspace(prefix = "kbls-ws-", { diary = false } = {}) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  for (const [rel, text] of Object.entries(NOTES)) {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
  if (diary) {
    fs.mkdirSync(path.join(dir, path.dirname(DIARY.path)), { recursive: true });
    fs.writeFileSync(path.join(dir, DIARY.path), DIARY.text);
  }
  // The store beside the workspace, as a user writes it: a store inside the root is a config error.
  fs.writeFileSync(path.join(dir, ".kbls.yaml"), `store: ../${path.basename(dir)}-kbls\n`);
  stores.push(storeOf(dir));
  return dir;
}

/** The store folder of a workspace made by `makeWorkspace` (removed when the process exits). */
function storeOf(dir) {
  return `${dir}-kbls`;
}

const stores = [];
process.on("exit", () => {
  for (const store of stores) fs.rmSync(store, { recursive: true, force: true });
});

/** The 0-based line of the first line of `rel` matching `re`. */
function lineOf(rel, re) {
  const lines = (rel === DIARY.path ? DIARY.text : rel === UNDO.path ? UNDO.text : NOTES[rel]).split("\n");
  const i = lines.findIndex((l) => re.test(l));
  if (i < 0) throw new Error(`no line matching ${re} in ${rel}`);
  return i;
}

module.exports = { NOTES, DIARY, UNDO, makeWorkspace, storeOf, lineOf };
