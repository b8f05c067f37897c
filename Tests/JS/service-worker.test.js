// What the service worker keeps of the person's reads, and for whom: `node --test Tests/JS/`.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");
const { webcrypto } = require("node:crypto");

const source = fs.readFileSync(path.join(__dirname, "..", "..", "Resources/App/service-worker.js"), "utf8");
const origin = "https://interlude.test";

/** The worker in a sandbox: a cache that compares addresses as browsers do, and a network that can be cut. */
function worker() {
  const listeners = {};
  const kept = new Map();
  const address = (key) => {
    const url = new URL(typeof key === "string" ? key : key.url);
    url.hash = "";
    return url.href;
  };
  const cache = {
    put: async (key, response) => void kept.set(address(key), response),
    match: async (key) => kept.get(address(key))?.clone(),
    keys: async () => [...kept.keys()].map((url) => ({ url })),
    delete: async (key) => kept.delete(address(key)),
  };
  const network = { online: true };
  const sandbox = {
    self: { addEventListener: (type, listener) => (listeners[type] = listener), location: { origin } },
    caches: { open: async () => cache, keys: async () => [], delete: async () => true },
    fetch: async (request) => {
      if (!network.online) throw new TypeError("Failed to fetch");
      return new Response(JSON.stringify({ for: request.headers.get("Authorization") }), { status: 200 });
    },
    crypto: webcrypto,
    TextEncoder,
    URL,
    Response,
    console,
  };
  vm.createContext(sandbox);
  vm.runInContext(source, sandbox);
  const read = async (url, token) => {
    const request = new Request(`${origin}${url}`, { headers: { Authorization: `Bearer ${token}` } });
    let answer;
    listeners.fetch({ request, respondWith: (promise) => (answer = promise) });
    return answer;
  };
  return { read, network };
}

test("a read kept for one session is given offline to that session only", async () => {
  const { read, network } = worker();
  await (await read("/api/v1/me/moods?limit=50", "ada")).json();
  network.online = false;
  assert.deepEqual(await (await read("/api/v1/me/moods?limit=50", "ada")).json(), { for: "Bearer ada" });
  await assert.rejects(read("/api/v1/me/moods?limit=50", "ben"), "Ben is never given what Ada's session read");
});

test("reads that are not the person's own are not kept at all", async () => {
  const { read } = worker();
  assert.equal(await read("/api/v1/studies", "ada"), undefined);
});
