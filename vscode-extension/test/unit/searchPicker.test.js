// Unit tests of the picker logic: formatting hits and the debounce/cancel/no-flicker controller.
const test = require("node:test");
const assert = require("node:assert/strict");
const {
  hitToItem, hitsToItems, oneLine, sectionOf, cursorForRange, groupedRows, sectionRows, emptyMessage, searchTitle, normalizeQuery,
  shouldRefresh, SearchController, lacksSectionSnippets, withSectionSnippets, stillExpanded, sameRow,
} = require("../../out/searchPicker.js");
const { isCancellation } = require("../../out/protocol.js");
const { fakeTimers, requestsByHand, tick } = require("../helpers/byHand.js");

function hit(over = {}) {
  return {
    uri: "file:///notes/rust/borrowing.md",
    path: "rust/borrowing.md",
    root: "file:///notes",
    range: { start: { line: 12, character: 0 }, end: { line: 31, character: 0 } },
    title: "Borrowing",
    breadcrumb: "Borrowing > Mutable references",
    snippet: "…you can have only one\n  mutable reference to a particular piece of data…",
    score: 0.0325,
    signals: { semantic: 1, lexical: 3 },
    reasons: [],
    more: 0,
    sections: [],
    ...over,
  };
}

test("hitToItem shows title, breadcrumb section and path, snippet as one-line detail", () => {
  const item = hitToItem(hit());
  assert.equal(item.label, "Borrowing");
  assert.equal(item.description, "§ Mutable references — rust/borrowing.md");
  assert.equal(item.detail, "…you can have only one mutable reference to a particular piece of data…");
  assert.equal(item.alwaysShow, true);
  assert.equal(item.hit.path, "rust/borrowing.md");
});

test("hitToItem: breadcrumb equal to the title shows only the path", () => {
  const item = hitToItem(hit({ breadcrumb: "Borrowing" }));
  assert.equal(item.description, "rust/borrowing.md");
});

test("hitToItem: deep breadcrumbs are joined with ›, foreign breadcrumbs kept whole", () => {
  assert.equal(hitToItem(hit({ breadcrumb: "Borrowing > A > B" })).description, "§ A › B — rust/borrowing.md");
  assert.equal(hitToItem(hit({ breadcrumb: "Other > X" })).description, "§ Other › X — rust/borrowing.md");
});

test("hitToItem: empty title falls back to the file name; folded hits say how many", () => {
  const item = hitToItem(hit({ title: "", breadcrumb: "", more: 2 }));
  assert.equal(item.label, "borrowing.md");
  assert.equal(item.description, "rust/borrowing.md (+2 more)");
});

test("hitToItem: related hits carry their reasons before the snippet", () => {
  const item = hitToItem(hit({ reasons: ["links here", "shared tags: rust"] }), { showReasons: true });
  assert.match(item.detail, /^links here; shared tags: rust — …you can have/);
  assert.doesNotMatch(hitToItem(hit({ reasons: ["links here"] })).detail, /links here/);
});

test("oneLine collapses whitespace and cuts long text at a word with an ellipsis", () => {
  assert.equal(oneLine("  a\n\n b\tc ", 100), "a b c");
  const long = "word ".repeat(100);
  const cut = oneLine(long, 50);
  assert.ok(cut.length <= 50, cut);
  assert.ok(cut.endsWith("…"));
  assert.ok(!cut.includes("wor…"), "cuts at a word boundary");
});

test("sectionOf strips the title from the breadcrumb", () => {
  assert.equal(sectionOf("T", "T > S"), "S");
  assert.equal(sectionOf("T", "T"), "");
  assert.equal(sectionOf("T", ""), "");
});

test("cursorForRange: the cursor at the start of the section's first line, nothing selected (issue 19 item 8)", () => {
  assert.deepEqual(cursorForRange({ start: { line: 12, character: 4 }, end: { line: 32, character: 0 } }), { line: 12, character: 0 });
  assert.deepEqual(cursorForRange({ start: { line: -1, character: 0 }, end: { line: 2, character: 0 } }), { line: 0, character: 0 });
});

function section(line, name, score) {
  return {
    range: { start: { line, character: 0 }, end: { line: line + 4, character: 0 } },
    breadcrumb: `Borrowing > ${name}`,
    snippet: `About ${name.toLowerCase()}.`,
    score,
  };
}

const grouped = [
  hit({ more: 2, sections: [section(40, "Slices", 0.5), section(60, "Lifetimes > Elision", 0.4)] }),
  hit({ uri: "file:///notes/b.md", path: "b.md", title: "B", breadcrumb: "B", more: 0 }),
];

test("groupedRows: one row per note, and under a note with other sections a row naming them (issue 19 item 5)", () => {
  const rows = groupedRows(grouped, new Set());
  assert.deepEqual(rows.map((r) => r.label), ["Borrowing", "$(unfold) +2 more sections", "B"]);
  assert.equal(rows[0].description, "§ Mutable references — rust/borrowing.md", "no '(+2 more)': the row below says it");
  assert.equal(rows[0].expandable, grouped[0].uri);
  assert.equal(rows[1].description, "Slices · Lifetimes › Elision");
  assert.equal(rows[1].expands, grouped[0].uri);
  assert.equal(rows[2].expandable, undefined);
  assert.equal(rows[0].range.start.line, 12);
});

test("groupedRows: an expanded note lists its sections in place, each opening at its own range", () => {
  const rows = groupedRows(grouped, new Set([grouped[0].uri]));
  assert.deepEqual(rows.map((r) => r.label), ["Borrowing", "$(indent) § Slices", "$(indent) § Lifetimes › Elision", "B"]);
  assert.deepEqual(rows.slice(1, 3).map((r) => r.range.start.line), [40, 60]);
  assert.equal(rows[1].description, "0.50 · Borrowing");
  assert.equal(rows[1].detail, "About slices.");
  assert.ok(rows.every((r) => r.expands === undefined));
  const unlisted = groupedRows([hit({ more: 12, sections: [section(40, "Slices", 0.5)] })], new Set([grouped[0].uri]));
  assert.equal(unlisted[1].description, "0.50 · Borrowing (+11 more in the note)");
  assert.equal(groupedRows([hit({ more: 1, sections: [section(40, "Slices", 0.5)] })], new Set())[1].label, "$(unfold) +1 more section");
});

test("withSectionSnippets: the sections of an answer sent without snippets take them from the answer that has them", () => {
  const bare = (s) => ({ ...s, snippet: "" });
  const shown = [
    hit({ more: 2, sections: [bare(section(40, "Slices", 0.5)), bare(section(60, "Lifetimes > Elision", 0.4))] }),
    grouped[1],
  ];
  assert.equal(lacksSectionSnippets(shown[0]), true);
  assert.equal(lacksSectionSnippets(grouped[0]), false);
  assert.equal(lacksSectionSnippets(grouped[1]), false, "a note without other sections lacks nothing");
  // the answer asked with sectionSnippets: the same note, one section more, another note's section at line 40 too
  const answer = [
    hit({ more: 3, sections: [section(40, "Slices", 0.5), section(50, "Arrays", 0.45), section(60, "Lifetimes > Elision", 0.4)] }),
    hit({ uri: "file:///notes/b.md", path: "b.md", more: 1, sections: [{ ...section(40, "Elsewhere", 0.3) }] }),
  ];
  const filled = withSectionSnippets(shown, answer);
  assert.deepEqual(filled[0].sections.map((s) => s.snippet), ["About slices.", "About lifetimes > elision."]);
  assert.deepEqual(filled[0].sections.map((s) => s.range.start.line), [40, 60], "the sections shown stay those shown");
  assert.equal(filled[0].more, 2);
  assert.equal(filled[1], grouped[1]);
  assert.equal(shown[0].sections[0].snippet, "", "the shown hits are not changed in place");
  const rows = groupedRows(filled, new Set([filled[0].uri]));
  assert.equal(rows[1].detail, "About slices.");
  assert.equal(groupedRows(shown, new Set([shown[0].uri]))[1].detail, "", "listed at once, without a snippet until it comes");
  assert.deepEqual(withSectionSnippets(shown, [])[0].sections.map((s) => s.snippet), ["", ""], "a failed answer leaves them empty");
});

test("stillExpanded and sameRow: the same query answered again keeps what was expanded and the row the cursor was on", () => {
  const expanded = new Set([grouped[0].uri, "file:///notes/gone.md"]);
  assert.deepEqual([...stillExpanded(expanded, grouped)], [grouped[0].uri], "a note the new answer lacks is dropped");
  assert.deepEqual([...stillExpanded(expanded, [{ ...grouped[0], more: 0, sections: [] }])], [], "nor one without other sections now");
  const before = groupedRows(grouped, new Set([grouped[0].uri]));
  const after = groupedRows([grouped[0], hit({ uri: "file:///notes/c.md", path: "c.md", title: "C" }), grouped[1]], new Set([grouped[0].uri]));
  assert.equal(sameRow(after, before[2]), after[2], "the second listed section, still there");
  assert.equal(sameRow(after, before[3]).label, "B", "the note B, now one row lower");
  assert.equal(after.indexOf(sameRow(after, before[3])), 4);
  assert.equal(sameRow(after, { ...before[1], range: section(99, "X", 0).range }), undefined);
  assert.equal(sameRow(after, undefined), undefined);
});

test("sectionRows: a row per hit as sent (the setting kbls.search.groupByNote off)", () => {
  const rows = sectionRows([hit(), hit({ range: section(40, "Slices", 0.5).range })]);
  assert.deepEqual(rows.map((r) => r.range.start.line), [12, 40]);
  assert.ok(rows.every((r) => r.label === "Borrowing"));
});

test("emptyMessage explains an empty list, mentioning query syntax and index state", () => {
  assert.match(emptyMessage(""), /tag:NAME/);
  assert.match(emptyMessage("x", "indexing"), /indexing/);
  assert.equal(emptyMessage("x", "ready"), 'No results for "x"');
});

test("searchTitle marks results found before the index is ready as partial (issue 13)", () => {
  assert.match(searchTitle("loading"), /partial.*model is still loading/);
  assert.match(searchTitle("indexing"), /partial.*indexing/);
  assert.match(searchTitle("error"), /problem/);
  assert.equal(searchTitle("ready"), "KB: Search");
  assert.equal(searchTitle(undefined), "KB: Search");
});

test("normalizeQuery trims, keeps query syntax and caps at 4096 characters", () => {
  assert.equal(normalizeQuery("  tag:rust path:notes/** owner  "), "tag:rust path:notes/** owner");
  assert.equal(normalizeQuery("x".repeat(5000)).length, 4096);
});

test("hitsToItems keeps the server's order", () => {
  const items = hitsToItems([hit({ title: "B" }), hit({ title: "A" }), hit({ title: "C" })]);
  assert.deepEqual(items.map((i) => i.label), ["B", "A", "C"]);
});

// --- SearchController -------------------------------------------------------------------------

/** A controller with manual timers, whose queries the test answers by hand (`calls`). */
function makeController({ ignoresCancel = false } = {}) {
  const timers = fakeTimers();
  const { run, requests: calls } = requestsByHand({ ignoresCancel });
  const shown = [];
  const busy = [];
  const errors = [];
  let cleared = 0;
  const controller = new SearchController({
    debounceMs: 150,
    timers,
    run,
    onResults: (q, r) => shown.push([q, r]),
    onCleared: () => cleared++,
    onError: (q, e) => errors.push([q, e]),
    onBusy: (b) => busy.push(b),
  });
  return { controller, timers, calls, shown, busy, errors, cleared: () => cleared };
}

test("typing is debounced: only the last value of a burst is sent", async () => {
  const t = makeController();
  for (const v of ["o", "ow", "own", "owne", "owner"]) t.controller.update(v);
  assert.equal(t.calls.length, 0, "nothing sent before the debounce fires");
  assert.equal(t.timers.size, 1, "one timer pending");
  t.timers.flush();
  assert.deepEqual(t.calls.map((c) => c.params), ["owner"]);
  t.calls[0].resolve({ hits: ["h"] });
  await tick();
  assert.deepEqual(t.shown, [["owner", { hits: ["h"] }]]);
  assert.equal(t.busy.at(-1), false);
});

test("a new query cancels the request in flight", async () => {
  const t = makeController();
  t.controller.update("first");
  t.timers.flush();
  const first = t.calls[0];
  assert.equal(first.token.isCancellationRequested, false);
  t.controller.update("second");
  assert.equal(first.token.isCancellationRequested, true, "superseded request cancelled at the keystroke");
  t.timers.flush();
  t.calls[1].resolve({ hits: [2] });
  await tick();
  assert.deepEqual(t.shown.map((s) => s[0]), ["second"]);
  assert.equal(t.errors.length, 0, "a cancellation is not an error");
});

test("results never flicker back: a late answer to an older query is dropped", async () => {
  // A server that ignores cancellation and answers the old query after the new one.
  const t = makeController({ ignoresCancel: true });
  t.controller.update("old");
  t.timers.flush();
  t.controller.update("new");
  t.timers.flush();
  t.calls[1].resolve("new-results");
  await tick();
  t.calls[0].resolve("old-results");
  await tick();
  assert.deepEqual(t.shown, [["new", "new-results"]]);
  assert.equal(t.controller.shownQuery, "new");
});

test("an older answer arriving first is dropped too, and busy stays on until the newest answers", async () => {
  const t = makeController({ ignoresCancel: true });
  t.controller.update("a");
  t.timers.flush();
  t.controller.update("ab");
  t.timers.flush();
  t.calls[0].resolve("a-results");
  await tick();
  assert.deepEqual(t.shown, []);
  assert.equal(t.busy.at(-1), true);
  t.calls[1].resolve("ab-results");
  await tick();
  assert.deepEqual(t.shown, [["ab", "ab-results"]]);
  assert.equal(t.busy.at(-1), false);
});

test("clearing the input cancels everything and shows the prompt", async () => {
  const t = makeController();
  t.controller.update("x");
  t.timers.flush();
  t.controller.update("   ");
  assert.equal(t.calls[0].token.isCancellationRequested, true);
  assert.equal(t.cleared(), 1);
  assert.equal(t.timers.size, 0);
  t.calls[0].resolve("late");
  await tick();
  assert.deepEqual(t.shown, []);
});

test("errors of the current query are reported, of a superseded one are not", async () => {
  const t = makeController({ ignoresCancel: true });
  t.controller.update("bad");
  t.timers.flush();
  t.calls[0].reject(new Error("boom"));
  await tick();
  assert.equal(t.errors.length, 1);
  assert.equal(t.errors[0][0], "bad");
  t.controller.update("old");
  t.timers.flush();
  t.controller.update("new");
  t.calls[1].reject(new Error("late boom"));
  await tick();
  assert.equal(t.errors.length, 1);
});

test("runNow skips the debounce (initial query) and dispose stops everything", async () => {
  const t = makeController();
  const done = t.controller.runNow("now");
  assert.deepEqual(t.calls.map((c) => c.params), ["now"]);
  t.calls[0].resolve("r");
  await done;
  assert.deepEqual(t.shown, [["now", "r"]]);
  t.controller.update("more");
  t.controller.dispose();
  assert.equal(t.timers.size, 0);
  t.controller.update("after");
  assert.equal(t.timers.size, 0);
});

test("query syntax passes through to the server untouched", async () => {
  const t = makeController();
  t.controller.update("tag:rust path:notes/** who owns");
  t.timers.flush();
  assert.equal(t.calls[0].params, "tag:rust path:notes/** who owns");
});

test("isCancellation recognises the server's RequestCancelled and VS Code's Canceled", () => {
  assert.equal(isCancellation({ code: -32800 }), true);
  assert.equal(isCancellation({ name: "Canceled" }), true);
  assert.equal(isCancellation(new Error("x")), false);
  assert.equal(isCancellation(null), false);
});

test("shouldRefresh: answers from a loading or indexing index are asked again once it is ready", () => {
  assert.equal(shouldRefresh("loading", "ready"), true);
  assert.equal(shouldRefresh("indexing", "ready"), true);
  assert.equal(shouldRefresh("ready", "ready"), false);
  assert.equal(shouldRefresh(undefined, "ready"), false, "nothing shown yet");
  assert.equal(shouldRefresh("loading", "indexing"), false);
});
