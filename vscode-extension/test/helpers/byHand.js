// Test doubles for the debounce-and-cancel logic (the search picker's controller, the Related
// Notes follower): timers the test fires by hand, requests the test answers by hand, and one turn
// of the event loop for the answers to land.
const CANCELLED = -32800; // LSP RequestCancelled

/** Timers the test fires with `flush()`; `size` and `delays` tell what is pending. */
function fakeTimers() {
  let next = 1;
  const pending = new Map();
  return {
    setTimeout(fn, ms) {
      const id = next++;
      pending.set(id, { fn, ms });
      return id;
    },
    clearTimeout(id) {
      pending.delete(id);
    },
    flush() {
      const all = [...pending.values()];
      pending.clear();
      for (const t of all) t.fn();
    },
    get size() {
      return pending.size;
    },
    get delays() {
      return [...pending.values()].map((p) => p.ms);
    },
  };
}

/**
 * A `run(params, token)` for the logic under test: each request is kept in `requests` as
 * `{ params, token, resolve, reject, cancelled }` for the test to answer. Cancelling its token
 * rejects it as the server does (RequestCancelled), unless `ignoresCancel`: a server that
 * answers a cancelled request anyway.
 */
function requestsByHand({ ignoresCancel = false } = {}) {
  const requests = [];
  const run = (params, token) =>
    new Promise((resolve, reject) => {
      const request = { params, token, resolve, reject, cancelled: false };
      if (!ignoresCancel) {
        token.onCancellationRequested(() => {
          request.cancelled = true;
          reject(Object.assign(new Error("cancelled"), { code: CANCELLED }));
        });
      }
      requests.push(request);
    });
  return { run, requests };
}

/** One turn of the event loop: answers resolved by the test reach their callbacks. */
const tick = () => new Promise((r) => setImmediate(r));

module.exports = { fakeTimers, requestsByHand, tick };
