// Calls the Interlude API with the session's token; a dropped connection and an ended session are answers too.

import { message } from "./i18n.js";
import { session } from "./storage.js";

/** Sends a request with the session's token; resolves to the response, or null when there is no connection. */
async function send(method, path, body, accept = "application/json") {
  const headers = { Accept: accept, "Accept-Language": document.documentElement.lang || "en" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  let response;
  try {
    response = await fetch(`/api/v1${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
    });
  } catch {
    return null;
  }
  if (response.status === 401 && session.token && path !== "/sessions") {
    session.token = null;
    goToLogin(true);
  }
  return response;
}

/** Calls the API; resolves to { ok, status, data } and never throws, so a dropped connection is an answer too. */
export async function api(method, path, body) {
  const response = await send(method, path, body);
  if (!response) return { ok: false, status: 0, data: { detail: message("network") } };
  let data = null;
  const text = await response.text();
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  return { ok: response.ok, status: response.status, data, next: response.headers.get("Next-Cursor") };
}

/** Reads every page of a list, following `Next-Cursor`; resolves like api(), with all the items or the first failure. */
export async function apiList(path) {
  const items = [];
  let cursor = null;
  do {
    const query = new URLSearchParams({ limit: "200" });
    if (cursor) query.set("cursor", cursor);
    const result = await api("GET", `${path}${path.includes("?") ? "&" : "?"}${query}`);
    if (!result.ok) return result;
    items.push(...result.data);
    cursor = result.next;
  } while (cursor);
  return { ok: true, status: 200, data: items };
}

/** Sends a file or a part of one as it is (a health import); resolves to { ok, status, data } like api(). */
export async function apiUpload(method, path, blob, headers) {
  let response;
  try {
    response = await fetch(`/api/v1${path}`, {
      method,
      headers: { Accept: "application/json", Authorization: `Bearer ${session.token}`, ...headers },
      body: blob,
      credentials: "omit",
    });
  } catch {
    return { ok: false, status: 0, data: { detail: message("network") } };
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  return { ok: response.ok, status: response.status, data };
}

/** Reads a text the API draws (an audiogram's SVG); resolves to { ok, status, text }. */
export async function apiText(path) {
  const response = await send("GET", path, undefined, "image/svg+xml");
  if (!response) return { ok: false, status: 0, text: "" };
  return { ok: response.ok, status: response.status, text: await response.text() };
}

export function goToLogin(expired) {
  const next = encodeURIComponent(location.pathname + location.search);
  location.assign(`/app/login?next=${next}${expired ? "&expired=1" : ""}`);
}

/** The signed-in person, or null. */
export async function loadMe() {
  const result = await api("GET", "/me");
  return result.ok ? result.data : null;
}

/** Reads each open questionnaire once, so the service worker keeps it (and its definition) for offline use. */
export function keepForOffline(prompts) {
  for (const prompt of prompts) api("GET", `/me/prompts/${encodeURIComponent(prompt.id)}`);
}
