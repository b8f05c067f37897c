// Changes made without a connection wait here (IndexedDB) until they can be sent with POST /api/v1/sync.
// Each carries its own id, so sending it twice (a connection lost mid-way) changes nothing on the server.

import { forgetDraft } from "./storage.js";

const DATABASE = "interlude";
const QUEUE = "outbox";
const REPORTS = "reports";

function open() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => {
      request.result.createObjectStore(QUEUE, { keyPath: "id" });
      request.result.createObjectStore(REPORTS, { keyPath: "id" });
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function run(store, mode, action) {
  const database = await open();
  return new Promise((resolve, reject) => {
    const transaction = database.transaction(store, mode);
    const result = action(transaction.objectStore(store));
    transaction.oncomplete = () => resolve(result && "result" in result ? result.result : undefined);
    transaction.onerror = () => reject(transaction.error);
  });
}

/** Keeps a mutation (`{id, type, ...}` as POST /sync takes it) with a label the person recognises. */
export async function enqueue(mutation, label) {
  await run(QUEUE, "readwrite", (store) => store.put({ ...mutation, label, queuedAt: new Date().toISOString() }));
  announce();
}

/** The waiting mutations, oldest first. */
export async function pending() {
  const items = (await run(QUEUE, "readonly", (store) => store.getAll())) || [];
  return items.sort((a, b) => a.queuedAt.localeCompare(b.queuedAt));
}

/** What the server refused or found in conflict, for the person to see; removed once seen. */
export async function reports() {
  return (await run(REPORTS, "readonly", (store) => store.getAll())) || [];
}

export async function dismiss(id) {
  await run(REPORTS, "readwrite", (store) => store.delete(id));
  announce();
}

/** Empties the queue and the reports, for signing out. */
export async function clear() {
  await run(QUEUE, "readwrite", (store) => store.clear());
  await run(REPORTS, "readwrite", (store) => store.clear());
  announce();
}

let flushing = null;

/**
 * Sends what waits, in order, if there is a connection. Applied mutations leave the queue; conflicts and
 * refusals leave it too but are kept as reports, so no change disappears without the person hearing of it. A
 * change held back for a consent answer stays queued.
 */
export function flush(api) {
  if (flushing) return flushing;
  flushing = (async () => {
    try {
      const items = await pending();
      if (!items.length || !navigator.onLine) return { sent: 0 };
      const mutations = items.map(({ label, queuedAt, ...mutation }) => mutation);
      const result = await api("POST", "/sync", { mutations });
      if (!result.ok) return { sent: 0, failed: result.status };
      for (const [index, outcome] of result.data.results.entries()) {
        const item = items[index];
        // Held back until the person answers a study's new consent version: it stays here and goes again later.
        if (outcome.status === "waiting") {
          window.dispatchEvent(new CustomEvent("interlude:consent-needed"));
          continue;
        }
        await run(QUEUE, "readwrite", (store) => store.delete(item.id));
        // Sent answers need no copy on the device any more.
        if (item.type === "response") forgetDraft(item.response.promptId);
        // Data erased at the person's request is not kept or reported: the copy here simply goes.
        if (outcome.status !== "applied" && outcome.problem?.type !== "/problems/erased") {
          await run(REPORTS, "readwrite", (store) =>
            store.put({ id: item.id, label: item.label, status: outcome.status, detail: outcome.problem?.detail || "" }),
          );
        }
      }
      return { sent: items.length };
    } finally {
      flushing = null;
      announce();
    }
  })();
  return flushing;
}

function announce() {
  window.dispatchEvent(new CustomEvent("interlude:outbox"));
}
