// The patient app's service worker: keeps the app shell and what the app last read (open questionnaires with
// their definitions, appointments, health records) so the app opens and questionnaires can be answered without a connection;
// shows push notifications and opens the page a tap asks for.

// Where this release's styles and scripts are: the server writes `/assets/<version>` here when it sends the worker,
// so every release is a new worker with a cache of its own.
const ASSETS = "";
const VERSION = `interlude-v24${ASSETS}`;
const SHELL = [
  "/app",
  "/app/questionnaires",
  "/app/appointments",
  "/app/events",
  "/app/therapies",
  "/app/audiograms",
  "/app/moods",
  "/app/thoughts",
  "/app/act",
  "/app/act/present-moment",
  "/app/act/values",
  "/app/act/committed-action",
  "/app/act/self-as-context",
  "/app/act/defusion",
  "/app/act/acceptance",
  "/app/health-data",
  "/app/schedule",
  "/app/results",
  "/app/interventions",
  "/app/profile",
  "/app/login",
  "/app/manifest.webmanifest",
  "/icons/icon-192.png",
  "/icons/icon.svg",
  ...[
    "/css/interlude.css",
    "/js/app.js",
    "/js/lib/api.js",
    "/js/lib/backup-crypto.js",
    "/js/lib/calendar.js",
    "/js/lib/consent.js",
    "/js/lib/context-capture.js",
    "/js/lib/defusion.js",
    "/js/lib/dom.js",
    "/js/lib/forms.js",
    "/js/lib/i18n.js",
    "/js/lib/instrument-logic.js",
    "/js/lib/message-choices.js",
    "/js/lib/interventions.js",
    "/js/lib/month-view.js",
    "/js/lib/navigation.js",
    "/js/lib/outbox.js",
    "/js/lib/page.js",
    "/js/lib/push.js",
    "/js/lib/questionnaire.js",
    "/js/lib/records.js",
    "/js/lib/storage.js",
    "/js/pages/access-log.js",
    "/js/pages/appointments.js",
    "/js/pages/audiograms.js",
    "/js/pages/consents.js",
    "/js/pages/events.js",
    "/js/pages/forgot-password.js",
    "/js/pages/health-data.js",
    "/js/pages/home.js",
    "/js/pages/intervention.js",
    "/js/pages/interventions.js",
    "/js/pages/invitation.js",
    "/js/pages/login.js",
    "/js/pages/moods.js",
    "/js/pages/my-data.js",
    "/js/pages/pairing.js",
    "/js/pages/preview.js",
    "/js/pages/profile.js",
    "/js/pages/questionnaire.js",
    "/js/pages/questionnaires.js",
    "/js/pages/register.js",
    "/js/pages/reset-password.js",
    "/js/pages/results.js",
    "/js/pages/schedule.js",
    "/js/pages/studies.js",
    "/js/pages/therapies.js",
    "/js/pages/therapist.js",
    "/js/pages/thoughts.js",
    "/js/pages/verify-pending.js",
    "/js/pages/verify.js",
  ].map((file) => ASSETS + file),
];
// Every questionnaire (and every intervention) page is the same shell; the app fills it from the API.
const SHELLS = [
  ["/app/questionnaires/", "/app/questionnaires/_"],
  ["/app/interventions/", "/app/interventions/_"],
];
// What the app reads that should still be there offline.
const READS = [
  /^\/api\/v1\/me$/,
  /^\/api\/v1\/me\/today$/,
  /^\/api\/v1\/me\/prompts(\/[0-9a-f-]+)?$/,
  /^\/api\/v1\/me\/appointments$/,
  /^\/api\/v1\/me\/therapist$/,
  /^\/api\/v1\/me\/interventions$/,
  /^\/api\/v1\/me\/(events|therapies|audiograms|moods|thoughts|sample-types)$/,
  /^\/api\/v1\/me\/audiograms\/[0-9a-f-]+\/chart\.svg$/,
];

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(VERSION)
      .then((cache) => cache.addAll(SHELL))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((key) => key !== VERSION).map((key) => caches.delete(key))))
      .then(() => self.clients.claim()),
  );
});

/** Drops every kept API answer: after signing out, or when the server no longer knows the session. */
async function forgetReads() {
  const cache = await caches.open(VERSION);
  const keys = await cache.keys();
  await Promise.all(keys.filter((key) => new URL(key.url).pathname.startsWith("/api/")).map((key) => cache.delete(key)));
}

/**
 * The key a read is kept under: its address, and a digest of the session and language that asked. Another person
 * signed in on the same phone, or the same person in another language, never gets these answers offline.
 */
async function readKey(request) {
  const who = `${request.headers.get("Authorization") || ""}\n${request.headers.get("Accept-Language") || ""}`;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(who)));
  const url = new URL(request.url);
  // A parameter, not a fragment: the cache compares addresses without their fragment.
  url.searchParams.set("kept-for", [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join(""));
  return url.href;
}

/** The network's answer, kept for later; the kept one when there is no network. */
async function networkFirst(request, key = request) {
  const cache = await caches.open(VERSION);
  try {
    const response = await fetch(request);
    if (response.ok) await cache.put(key, response.clone());
    if (response.status === 401) await forgetReads();
    return response;
  } catch (error) {
    const kept = await cache.match(key, { ignoreVary: true });
    if (kept) return kept;
    throw error;
  }
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || request.method !== "GET") return;
  if (url.pathname.startsWith("/api/")) {
    // Only reads that belong to the person are kept, under whose session asked; the query string is part of the key.
    if (READS.some((pattern) => pattern.test(url.pathname))) {
      event.respondWith(readKey(request).then((key) => networkFirst(request, key)));
    }
    return;
  }
  const shell = request.mode === "navigate" && SHELLS.find(([prefix]) => url.pathname.startsWith(prefix));
  if (shell) {
    event.respondWith(networkFirst(request, shell[1]));
    return;
  }
  if (request.mode === "navigate" || SHELL.includes(url.pathname)) {
    event.respondWith(networkFirst(request, url.pathname));
  }
});

self.addEventListener("message", (event) => {
  if (event.data && event.data.type === "signed-out") event.waitUntil(forgetReads());
});

self.addEventListener("push", (event) => {
  let message = {};
  try {
    message = event.data ? event.data.json() : {};
  } catch {
    message = { title: event.data ? event.data.text() : "Interlude" };
  }
  event.waitUntil(
    self.registration.showNotification(message.title || "Interlude", {
      body: message.body || "",
      icon: "/icons/icon-192.png",
      tag: message.id,
      data: { path: message.path || "/app", click: message.click },
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const { path, click } = event.notification.data || {};
  event.waitUntil(
    (async () => {
      if (click) {
        try {
          await fetch(click, { method: "POST" });
        } catch {
          // Recording the tap is a courtesy; opening the page matters more.
        }
      }
      const target = new URL(path || "/app", self.location.origin).href;
      const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      const existing = windows.find((client) => client.url.startsWith(self.location.origin + "/app"));
      if (existing) {
        await existing.navigate(target);
        return existing.focus();
      }
      return self.clients.openWindow(target);
    })(),
  );
});
