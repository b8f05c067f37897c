// What the app keeps on this device: the session token, the address waiting for verification, questionnaire
// drafts and small JSON values. Nothing here imports another module.

const TOKEN_KEY = "interlude.token";
const PENDING_EMAIL_KEY = "interlude.pendingEmail";

export const session = {
  get token() {
    return localStorage.getItem(TOKEN_KEY);
  },
  set token(value) {
    if (value) {
      localStorage.setItem(TOKEN_KEY, value);
    } else {
      localStorage.removeItem(TOKEN_KEY);
      // What the service worker kept of this person's reads must not outlive the session.
      navigator.serviceWorker?.controller?.postMessage({ type: "signed-out" });
    }
  },
};

/** The address a new account waits to verify, kept for this tab only. */
export const pendingEmail = {
  get value() {
    return sessionStorage.getItem(PENDING_EMAIL_KEY) || "";
  },
  set value(address) {
    if (address) sessionStorage.setItem(PENDING_EMAIL_KEY, address);
    else sessionStorage.removeItem(PENDING_EMAIL_KEY);
  },
};

/** A JSON value kept under `key`, or `fallback` when there is none or it is damaged. */
export function read(key, fallback) {
  try {
    return JSON.parse(localStorage.getItem(key)) ?? fallback;
  } catch {
    return fallback;
  }
}

export function write(key, value) {
  localStorage.setItem(key, JSON.stringify(value));
}

const STORE_PREFIX = "interlude.prompt.";

/** A random UUID (version 4) even where crypto.randomUUID is unavailable (plain http on a LAN). */
export function uuid() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** What is kept on the device for a prompt: answers, the touched sliders, the response id and progress. */
export function loadDraft(promptId) {
  try {
    const stored = JSON.parse(localStorage.getItem(STORE_PREFIX + promptId) || "null");
    if (stored && typeof stored === "object") return stored;
  } catch {
    // A damaged entry starts over rather than blocking the questionnaire.
  }
  return { answers: {}, responseId: uuid(), startedAt: null, progress: null };
}

export function saveDraft(promptId, draft) {
  localStorage.setItem(STORE_PREFIX + promptId, JSON.stringify(draft));
}

export function forgetDraft(promptId) {
  localStorage.removeItem(STORE_PREFIX + promptId);
}
