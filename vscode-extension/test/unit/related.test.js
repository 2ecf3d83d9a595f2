// Unit tests of the Related Notes view's logic: which section a line is in, the follower that
// debounces cursor moves, skips a section already shown and cancels a request when the cursor
// moves on, the rows (title, reason, score), the link "Insert link here" writes, and the query a
// selection makes.
const test = require("node:test");
const assert = require("node:assert/strict");
const { headingLines, sectionStart, RelatedFollower } = require("../../out/relatedFollow.js");
const { relatedRow, relatedRows, shortReason, shortReasons, detectLinkStyle, chooseLinkStyle, linkText, relativePath, selectionQuery } =
  require("../../out/relatedItems.js");
const { MAX_QUERY_LENGTH } = require("../../out/protocol.js");
const { fakeTimers, requestsByHand, tick } = require("../helpers/byHand.js");

const NOTE = `---
title: Diary
tags: [x]
# not a heading: front matter
---
# Diary

Intro line.

## Bread
\`\`\`sh
# not a heading: code
\`\`\`
Feeding the starter.
    # indented four: code, not a heading
### Deeper

## Trains
Shinkansen.
#hashtag is not a heading
`;
const lines = NOTE.split("\n");
const at = (re) => lines.findIndex((l) => re.test(l));

test("headingLines: ATX headings only, not in front matter, fenced code or an indented block; #tag is not one", () => {
  const h = headingLines(lines.length, (i) => lines[i]);
  assert.deepEqual(h, [at(/^# Diary/), at(/^## Bread/), at(/^### Deeper/), at(/^## Trains/)]);
  assert.deepEqual(headingLines(0, () => ""), []);
  // An unclosed front matter is not one: its lines are read as the body.
  assert.deepEqual(headingLines(3, (i) => ["---", "# A", "text"][i]), [1]);
  // A fence closes only with the same character, at least as long.
  const fenced = ["````", "```", "# in code", "````", "# out"];
  assert.deepEqual(headingLines(fenced.length, (i) => fenced[i]), [4]);
});

test("sectionStart: the last heading at or above the line, -1 above the first", () => {
  const h = [5, 9, 15, 18];
  assert.equal(sectionStart(h, 0), -1);
  assert.equal(sectionStart(h, 5), 5);
  assert.equal(sectionStart(h, 8), 5);
  assert.equal(sectionStart(h, 9), 9);
  assert.equal(sectionStart(h, 17), 15);
  assert.equal(sectionStart(h, 1000), 18);
  assert.equal(sectionStart([], 3), -1);
});

const place = (section, line = 0) => ({ uri: "file:///n/diary.md", position: { line, character: 0 }, sectionKey: `file:///n/diary.md#${section}` });

/** A follower whose requests the test answers by hand. */
function setup(debounceMs = 300) {
  const timers = fakeTimers();
  const { run, requests } = requestsByHand();
  const shown = [];
  const errors = [];
  const follower = new RelatedFollower({
    debounceMs,
    timers,
    run,
    onResults: (p, result) => shown.push({ key: p.sectionKey, result }),
    onError: (p, err) => errors.push({ key: p.sectionKey, err }),
  });
  return { follower, timers, requests, shown, errors };
}

test("follower: moves are debounced; only the place where the cursor settled is asked", async () => {
  const s = setup(300);
  s.follower.moved(place(5, 6));
  s.follower.moved(place(5, 7));
  s.follower.moved(place(9, 10));
  assert.equal(s.timers.size, 1, "one timer pending");
  assert.deepEqual(s.timers.delays, [300]);
  assert.equal(s.requests.length, 0, "nothing sent before the cursor settles");
  s.timers.flush();
  assert.equal(s.requests.length, 1);
  assert.deepEqual(s.requests[0].params.position, { line: 10, character: 0 });
  s.requests[0].resolve("bread");
  await tick();
  assert.deepEqual(s.shown, [{ key: place(9).sectionKey, result: "bread" }]);
});

test("follower: moving within the section shown asks nothing; another section asks again", async () => {
  const s = setup();
  s.follower.moved(place(5, 6));
  s.timers.flush();
  s.requests[0].resolve("A");
  await tick();
  s.follower.moved(place(5, 7));
  s.follower.moved(place(5, 8));
  assert.equal(s.timers.size, 0, "same section: no timer");
  s.timers.flush();
  assert.equal(s.follower.started, 1);
  s.follower.moved(place(9, 10));
  s.timers.flush();
  assert.equal(s.follower.started, 2);
  s.requests[1].resolve("B");
  await tick();
  assert.deepEqual(s.shown.map((x) => x.result), ["A", "B"]);
  // Back to the first section: it is asked again (the view shows one section at a time).
  s.follower.moved(place(5, 6));
  s.timers.flush();
  assert.equal(s.follower.started, 3);
});

test("follower: moving to another section cancels the request in flight at once; its late answer is dropped", async () => {
  const s = setup();
  s.follower.moved(place(5));
  s.timers.flush();
  const first = s.requests[0];
  // Within the same section the request in flight stays alive and is not sent twice.
  s.follower.moved(place(5, 7));
  assert.equal(first.cancelled, false);
  assert.equal(s.timers.size, 0);
  s.follower.moved(place(9));
  assert.equal(first.cancelled, true, "cancelled on the move, before the debounce");
  first.resolve("stale");
  s.timers.flush();
  s.requests[1].resolve("fresh");
  await tick();
  assert.deepEqual(s.shown.map((x) => x.result), ["fresh"]);
  assert.deepEqual(s.errors, [], "a cancellation is not an error");
});

test("follower: refresh asks again for the section shown; reset forgets it; errors are reported and retried", async () => {
  const s = setup();
  s.follower.moved(place(5));
  s.timers.flush();
  s.requests[0].resolve("A");
  await tick();
  void s.follower.refresh(place(5));
  assert.equal(s.follower.started, 2, "refresh sends at once");
  s.requests[1].reject(new Error("boom"));
  await tick();
  assert.equal(s.errors.length, 1);
  assert.match(s.errors[0].err.message, /boom/);
  // After an error the same section is asked again on the next move.
  s.follower.moved(place(5, 9));
  s.timers.flush();
  assert.equal(s.follower.started, 3);
  s.requests[2].resolve("A2");
  await tick();
  s.follower.reset();
  s.follower.moved(place(5));
  s.timers.flush();
  assert.equal(s.follower.started, 4, "after reset the section is asked again");
  s.follower.dispose();
  assert.equal(s.requests[3].cancelled, true, "dispose cancels the request in flight");
  s.follower.moved(place(9));
  assert.equal(s.timers.size, 0, "a disposed follower does nothing");
});

test("follower: setDebounce applies to the next move", () => {
  const s = setup(300);
  s.follower.setDebounce(50);
  s.follower.moved(place(1));
  assert.deepEqual(s.timers.delays, [50]);
});

function hit(over = {}) {
  return {
    uri: "file:///notes/baking/sour%20dough.md",
    path: "baking/sour dough.md",
    root: "file:///notes",
    range: { start: { line: 8, character: 0 }, end: { line: 11, character: 0 } },
    title: "Sourdough bread",
    breadcrumb: "Sourdough bread > Feeding the starter",
    snippet: "Feed the starter\n twice a day",
    score: 0.73456,
    signals: { semantic: null, lexical: null },
    reasons: ["similar to § Feeding the starter", "links here", "shared tags: baking, food"],
    more: 0,
    sections: [],
    ...over,
  };
}

test("relatedRow: the score leads the label, short reasons follow; the tooltip has the full reasons, section, path and snippet (issue 19 item 7)", () => {
  const row = relatedRow(hit());
  assert.equal(row.label, "0.73 · Sourdough bread");
  assert.equal(row.description, "§ Feeding the starter · links here · shared tags");
  assert.match(row.tooltip, /^Sourdough bread › Feeding the starter\nbaking\/sour dough\.md\nscore 0\.73\n/);
  assert.match(row.tooltip, /similar to § Feeding the starter\n/);
  assert.match(row.tooltip, /shared tags: baking, food/);
  assert.match(row.tooltip, /Feed the starter twice a day$/);
  assert.equal(row.hit.range.start.line, 8);
  assert.equal(relatedRow(hit({ title: "", reasons: ["linked from here"], score: 1 })).label, "1.00 · sour dough.md");
  assert.equal(relatedRow(hit({ reasons: ["linked from here"], score: 1 })).description, "linked from here");
  assert.equal(relatedRow(hit({ reasons: ["similar in meaning", "linked from here", "links here"], score: 1.2 })).description, "similar · links both ways");
  assert.equal(shortReason("similar to § Setup > Final steps"), "§ Setup › Final steps");
  assert.equal(shortReason("similar in meaning"), "similar");
  assert.deepEqual(shortReasons(["links here", "shared tags: a"]), ["links here", "shared tags"]);
  assert.deepEqual(shortReasons(["linked from here", "links here"]), ["links both ways"]);
  assert.equal(relatedRows([hit(), hit()]).length, 2);
});

test("detectLinkStyle: the note's majority; markdown when it has no links; URLs are not note links", () => {
  assert.equal(detectLinkStyle("no links"), "markdown");
  assert.equal(detectLinkStyle("[[a]] and [[b|B]] and [c](c.md)"), "wiki");
  assert.equal(detectLinkStyle("[[a]] [c](c.md) [d](../d.md#x)"), "markdown");
  assert.equal(detectLinkStyle("[[a]] [site](https://example.com/x.md) [s2](http://e.org/y.md)"), "wiki");
  assert.equal(chooseLinkStyle("wiki", "[c](c.md)"), "wiki");
  assert.equal(chooseLinkStyle("markdown", "[[a]]"), "markdown");
  assert.equal(chooseLinkStyle("auto", "[[a]]"), "wiki");
});

test("relativePath: from the note's folder to the target", () => {
  assert.equal(relativePath("/n/rust/ownership.md", "/n/rust/borrowing.md"), "borrowing.md");
  assert.equal(relativePath("/n/rust/ownership.md", "/n/baking/bread.md"), "../baking/bread.md");
  assert.equal(relativePath("/n/a.md", "/n/x/y/z.md"), "x/y/z.md");
  assert.equal(relativePath("/n/x/y/a.md", "/n/b.md"), "../../b.md");
});

test("linkText: a relative markdown link (spaces and parentheses escaped) or a wiki link by path", () => {
  assert.equal(linkText(hit(), "file:///notes/rust/ownership.md", "markdown"), "[Sourdough bread](../baking/sour%20dough.md)");
  assert.equal(linkText(hit({ uri: "file:///notes/a%20(1).md", path: "a (1).md" }), "file:///notes/b.md", "markdown"), "[Sourdough bread](a%20%281%29.md)");
  assert.equal(linkText(hit(), "file:///notes/rust/ownership.md", "wiki"), "[[baking/sour dough|Sourdough bread]]");
  assert.equal(linkText(hit({ path: "kyoto.md", title: "kyoto" }), "file:///notes/x.md", "wiki"), "[[kyoto]]");
  // Brackets and pipes in a title would end the link early.
  assert.equal(linkText(hit({ title: "A [b] | c" }), "file:///notes/x.md", "wiki"), "[[baking/sour dough|A b c]]");
  assert.equal(linkText(hit({ title: "A [b]" }), "file:///notes/baking/x.md", "markdown"), "[A b](sour%20dough.md)");
});

test("selectionQuery: one line, whitespace collapsed, cut to the server's cap", () => {
  assert.equal(selectionQuery("  feeding\n  the\tstarter \n"), "feeding the starter");
  assert.equal(selectionQuery("   \n "), "");
  assert.equal(selectionQuery("x ".repeat(5000)).length, MAX_QUERY_LENGTH);
});
