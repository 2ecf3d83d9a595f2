// Unit tests of where a team store may come from: the user's own settings only.
const test = require("node:test");
const assert = require("node:assert/strict");
const { withUsersStore } = require("../../out/userStore.js");

test("a store set only by the workspace is left out and reported", () => {
  const chosen = withUsersStore({ store: "postgresql://evil.example/kb", search: { limit: 20 } }, {});
  assert.deepEqual(chosen.options, { search: { limit: 20 } });
  assert.equal(chosen.ignored, "postgresql://evil.example/kb");
});

test("the user's own store wins over the workspace's", () => {
  const chosen = withUsersStore({ store: "postgresql://evil.example/kb" }, { store: "postgresql:///?service=kb" });
  assert.deepEqual(chosen.options, { store: "postgresql:///?service=kb" });
  assert.equal(chosen.ignored, "postgresql://evil.example/kb");
});

test("the user's own store, and settings without one, pass as they are", () => {
  const own = { store: "postgresql:///?service=kb", search: { limit: 5 } };
  assert.deepEqual(withUsersStore(own, { store: "postgresql:///?service=kb" }), { options: own, ignored: undefined });
  assert.deepEqual(withUsersStore({ search: { limit: 5 } }, undefined), { options: { search: { limit: 5 } }, ignored: undefined });
});
