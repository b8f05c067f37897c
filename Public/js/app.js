// The patient app: wires the server-rendered pages to the Interlude API.
// Texts come from the page (#messages) so the script itself speaks no language.

import { safeNext } from "./lib/navigation.js";

const TOKEN_KEY = "interlude.token";
const PENDING_EMAIL_KEY = "interlude.pendingEmail";

const messages = Object.fromEntries(
  [...document.querySelectorAll("[data-messages] [data-key]")].map((node) => [node.dataset.key, node.textContent]),
);

export function message(key, values = {}) {
  let text = messages[key] || key;
  for (const [name, value] of Object.entries(values)) text = text.replaceAll(`{${name}}`, String(value));
  return text;
}

const session = {
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

/** Calls the API; resolves to { ok, status, data } and never throws, so a dropped connection is an answer too. */
export async function api(method, path, body) {
  const headers = { Accept: "application/json", "Accept-Language": document.documentElement.lang || "en" };
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
    return { ok: false, status: 0, data: { detail: message("network") } };
  }
  let data = null;
  const text = await response.text();
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (response.status === 401 && session.token && path !== "/sessions") {
    session.token = null;
    goToLogin(true);
  }
  return { ok: response.ok, status: response.status, data };
}

function goToLogin(expired) {
  const next = encodeURIComponent(location.pathname + location.search);
  location.assign(`/app/login?next=${next}${expired ? "&expired=1" : ""}`);
}


// Forms ---------------------------------------------------------------------------------------------------

function errorSlot(form, field) {
  return form.querySelector(`[data-for="${field}"]`) || form.querySelector(`#${CSS.escape(field)}-error`);
}

function clearErrors(form) {
  form.querySelectorAll(".error").forEach((slot) => {
    slot.textContent = "";
    slot.hidden = true;
  });
  form.querySelectorAll("[aria-invalid]").forEach((input) => input.removeAttribute("aria-invalid"));
  const summary = form.querySelector("[data-summary]");
  if (summary) {
    summary.textContent = "";
    summary.hidden = true;
  }
  const success = form.querySelector("[data-success]");
  if (success) success.hidden = true;
}

function markField(form, field, text) {
  const slot = errorSlot(form, field);
  if (slot) {
    slot.textContent = text;
    slot.hidden = false;
  }
  const input = form.elements[field];
  if (input && input.setAttribute) input.setAttribute("aria-invalid", "true");
  else if (input && input.length) [...input].forEach((item) => item.setAttribute("aria-invalid", "true"));
  return Boolean(slot);
}

function showSummary(form, text) {
  const summary = form.querySelector("[data-summary]");
  if (!summary) return;
  summary.textContent = text;
  summary.hidden = false;
  summary.focus();
}

/**
 * Shows a problem response: each field's message beside it (or beside the nearest enclosing field, so
 * `days.monday.0` lands at `days.monday`), the rest in the summary at the top.
 */
function showProblem(form, problem) {
  const errors = (problem && problem.errors) || [];
  const unplaced = [];
  for (const error of errors) {
    let field = error.field || "";
    while (field && !markField(form, field, error.detail)) field = field.slice(0, Math.max(0, field.lastIndexOf(".")));
    if (!field) unplaced.push(error.detail);
  }
  const summaryText = errors.length ? [message("fixErrors"), ...unplaced].join(" ") : (problem && problem.detail) || message("network");
  showSummary(form, summaryText);
}

function showSuccess(form) {
  const success = form.querySelector("[data-success]");
  if (success) {
    success.hidden = false;
    success.focus?.();
  }
}

function values(form) {
  const data = {};
  for (const element of form.elements) {
    if (!element.name || element.disabled) continue;
    if (element.type === "checkbox") data[element.name] = element.checked;
    else if (element.type === "radio") {
      if (element.checked) data[element.name] = element.value;
      else if (!(element.name in data)) data[element.name] = "";
    } else data[element.name] = element.value;
  }
  return data;
}

/** Client-side checks the server would also make, to answer at once; returns true when the form may be sent. */
function requireFields(form, fields) {
  let valid = true;
  for (const field of fields) {
    const input = form.elements[field];
    const empty = input.type === "checkbox" ? !input.checked : !String(values(form)[field] || "").trim();
    if (empty) {
      markField(form, field, message("required"));
      valid = false;
    }
  }
  return valid;
}

function checkRepeat(form, field, repeatField) {
  if (form.elements[field].value !== form.elements[repeatField].value) {
    markField(form, repeatField, message("passwordsDiffer"));
    return false;
  }
  return true;
}

function onSubmit(name, handler) {
  const form = document.querySelector(`form[data-form="${name}"]`);
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form);
    const button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    try {
      await handler(form);
    } finally {
      if (button) button.disabled = false;
    }
  });
}

/** The form helpers, for the page modules loaded on demand. */
export const forms = { clearErrors, markField, showSummary, showProblem, values, requireFields, onSubmit };

// Shared page parts ---------------------------------------------------------------------------------------

function fillTimeZones() {
  const list = document.getElementById("time-zones");
  if (list && typeof Intl.supportedValuesOf === "function") {
    for (const zone of Intl.supportedValuesOf("timeZone")) {
      const option = document.createElement("option");
      option.value = zone;
      list.append(option);
    }
  }
}

function deviceTimeZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch {
    return "";
  }
}

function showSignedInParts() {
  const signedIn = Boolean(session.token);
  document.querySelectorAll("[data-signed-in]").forEach((node) => (node.hidden = !signedIn));
  document.querySelectorAll("[data-signed-out]").forEach((node) => (node.hidden = signedIn));
}

function watchConnection() {
  const banner = document.getElementById("connection");
  if (!banner) return;
  const update = () => (banner.hidden = navigator.onLine);
  window.addEventListener("online", update);
  window.addEventListener("offline", update);
  update();
}

function keepLanguageSwitchOnPage() {
  const link = document.querySelector("[data-language-switch]");
  if (!link) return;
  const url = new URL(link.href, location.href);
  url.searchParams.set("next", location.pathname + location.search);
  link.href = url.pathname + url.search;
}

function formatDate(value) {
  if (!value) return "";
  const date = new Date(value.length === 10 ? `${value}T12:00:00` : value);
  return new Intl.DateTimeFormat(document.documentElement.lang, { dateStyle: "long" }).format(date);
}

function formatDateTime(value) {
  return new Intl.DateTimeFormat(document.documentElement.lang, { dateStyle: "medium", timeStyle: "short" }).format(
    new Date(value),
  );
}

function setText(id, text) {
  const node = document.getElementById(id);
  if (node) node.textContent = text || "";
}

function genderLabel(gender) {
  return gender ? message(`gender${gender[0].toUpperCase()}${gender.slice(1)}`) : "";
}

// Pages ---------------------------------------------------------------------------------------------------

async function loadMe() {
  const result = await api("GET", "/me");
  return result.ok ? result.data : null;
}

const pages = {
  async home() {
    if (new URLSearchParams(location.search).has("deleted")) document.getElementById("deleted-notice").hidden = false;
    if (!session.token) return;
    const me = await loadMe();
    if (!me) return;
    setText("greeting", `${message("greeting")} ${me.name || me.email}`);
    const open = await api("GET", "/me/prompts");
    if (open.ok && open.data.length) {
      const badge = document.getElementById("open-count");
      badge.textContent = String(open.data.length);
      badge.hidden = false;
      keepForOffline(open.data);
    }
    const received = await api("GET", "/me/interventions");
    const unseen = received.ok ? received.data.filter((item) => item.state === "sent").length : 0;
    if (unseen) {
      const badge = document.getElementById("new-interventions");
      badge.textContent = String(unseen);
      badge.hidden = false;
    }
    const paired = me.patient && me.patient.paired;
    document.getElementById("pairing-hint").hidden = paired;
    document.getElementById("therapist-tile").hidden = !paired;
  },

  register() {
    const form = document.querySelector('form[data-form="register"]');
    fillTimeZones();
    const zone = deviceTimeZone();
    if (zone) form.elements.timeZone.value = zone;
    const email = form.elements.email;
    const status = document.getElementById("email-status");
    let timer;
    email.addEventListener("input", () => {
      clearTimeout(timer);
      status.textContent = "";
      timer = setTimeout(async () => {
        const value = email.value.trim();
        if (!value.includes("@")) return;
        const result = await api("GET", `/accounts/email-available?email=${encodeURIComponent(value)}`);
        if (result.ok && email.value.trim() === value) {
          status.textContent = result.data.available ? message("emailAvailable") : message("emailTaken");
        }
      }, 400);
    });
    onSubmit("register", async (form) => {
      const data = values(form);
      let valid = requireFields(form, ["email", "password", "repeatPassword", "timeZone", "acceptPrivacy"]);
      valid = checkRepeat(form, "password", "repeatPassword") && valid;
      if (!valid) return showSummary(form, message("fixErrors"));
      const body = {
        email: data.email.trim(),
        password: data.password,
        privacyPolicyVersion: data.privacyPolicyVersion,
        shareWithResearch: data.shareWithResearch,
        locale: data.locale,
        timeZone: data.timeZone.trim(),
      };
      if (data.name.trim()) body.name = data.name.trim();
      const result = await api("POST", "/accounts", body);
      if (!result.ok) return showProblem(form, result.data);
      sessionStorage.setItem(PENDING_EMAIL_KEY, body.email);
      location.assign("/app/verify-pending");
    });
  },

  "verify-pending"() {
    const pending = sessionStorage.getItem(PENDING_EMAIL_KEY) || "";
    setText("pending-email", pending);
    for (const name of ["resend", "correct-email"]) {
      const form = document.querySelector(`form[data-form="${name}"]`);
      if (form && pending) form.elements.email.value = pending;
    }
    onSubmit("resend", async (form) => {
      if (!requireFields(form, ["email"])) return showSummary(form, message("fixErrors"));
      const result = await api("POST", "/accounts/verification-email", { email: form.elements.email.value.trim() });
      if (!result.ok) return showProblem(form, result.data);
      showSuccess(form);
    });
    onSubmit("correct-email", async (form) => {
      if (!requireFields(form, ["email", "password", "newEmail"])) return showSummary(form, message("fixErrors"));
      const data = values(form);
      const result = await api("POST", "/accounts/email-correction", {
        email: data.email.trim(),
        password: data.password,
        newEmail: data.newEmail.trim(),
      });
      if (!result.ok) return showProblem(form, result.data);
      sessionStorage.setItem(PENDING_EMAIL_KEY, data.newEmail.trim());
      setText("pending-email", data.newEmail.trim());
      showSuccess(form);
    });
  },

  async verify() {
    const token = new URLSearchParams(location.search).get("token") || "";
    const result = await api("POST", "/accounts/verification", { token });
    document.getElementById("verify-working").hidden = true;
    const alreadyVerified = result.status === 409;
    if (result.ok || alreadyVerified) {
      sessionStorage.removeItem(PENDING_EMAIL_KEY);
      document.getElementById("verify-done").hidden = false;
      return;
    }
    const reason = (result.data && result.data.errors && result.data.errors[0] && result.data.errors[0].detail) ||
      (result.data && result.data.detail) || message("verifyFailed");
    setText("verify-reason", reason);
    document.getElementById("verify-failed").hidden = false;
  },

  login() {
    if (new URLSearchParams(location.search).has("expired")) {
      const form = document.querySelector('form[data-form="login"]');
      showSummary(form, message("sessionEnded"));
    }
    onSubmit("login", async (form) => {
      document.getElementById("unverified").hidden = true;
      if (!requireFields(form, ["email", "password"])) return showSummary(form, message("fixErrors"));
      const data = values(form);
      const result = await api("POST", "/sessions", { email: data.email.trim(), password: data.password });
      if (result.status === 403 && result.data && result.data.type === "/problems/email-not-verified") {
        sessionStorage.setItem(PENDING_EMAIL_KEY, data.email.trim());
        document.getElementById("unverified").hidden = false;
        return;
      }
      if (!result.ok) return showProblem(form, result.data);
      session.token = result.data.token;
      const next = new URLSearchParams(location.search).get("next");
      location.assign(safeNext(next, "/app"));
    });
  },

  "forgot-password"() {
    onSubmit("forgot-password", async (form) => {
      if (!requireFields(form, ["email"])) return showSummary(form, message("fixErrors"));
      const result = await api("POST", "/password-resets", { email: form.elements.email.value.trim() });
      if (!result.ok) return showProblem(form, result.data);
      showSuccess(form);
    });
  },

  "reset-password"() {
    const token = new URLSearchParams(location.search).get("token") || "";
    onSubmit("reset-password", async (form) => {
      let valid = requireFields(form, ["newPassword", "repeatPassword"]);
      valid = checkRepeat(form, "newPassword", "repeatPassword") && valid;
      if (!valid) return showSummary(form, message("fixErrors"));
      const result = await api("POST", "/password-resets/confirmation", {
        token,
        newPassword: form.elements.newPassword.value,
      });
      if (!result.ok) return showProblem(form, result.data);
      session.token = null;
      form.querySelectorAll(".field, button[type=submit]").forEach((node) => (node.hidden = true));
      showSuccess(form);
    });
  },

  async profile() {
    fillTimeZones();
    const me = await loadMe();
    if (!me) return;
    setText("profile-email", me.email);
    const form = document.querySelector('form[data-form="profile"]');
    form.elements.name.value = me.name || "";
    form.elements.locale.value = me.locale;
    form.elements.timeZone.value = me.timeZone;
    const patient = me.patient;
    form.elements.shareWithResearch.checked = Boolean(patient && patient.shareWithResearch);
    if (patient && patient.paired) {
      document.querySelectorAll("[data-paired]").forEach((node) => (node.hidden = false));
      setText("profile-pseudonym", patient.pseudonym);
      setText("profile-dateOfBirth", formatDate(patient.dateOfBirth));
      setText("profile-gender", genderLabel(patient.gender));
      setText("profile-pairedSince", formatDate(patient.pairedSince));
    }
    if (patient && patient.therapyStart) {
      document.querySelectorAll("[data-therapy]").forEach((node) => (node.hidden = false));
      setText("profile-therapyStart", formatDate(patient.therapyStart));
      setText("profile-therapyEnd", formatDate(patient.therapyEnd));
    }
    onSubmit("profile", async (form) => {
      const data = values(form);
      const result = await api("PATCH", "/me", {
        name: data.name.trim(),
        locale: data.locale,
        timeZone: data.timeZone.trim(),
        shareWithResearch: data.shareWithResearch,
      });
      if (!result.ok) return showProblem(form, result.data);
      if (data.locale !== document.documentElement.lang) {
        location.assign(`/language?set=${data.locale}&next=/app/profile`);
        return;
      }
      showSuccess(form);
    });
    onSubmit("change-password", async (form) => {
      let valid = requireFields(form, ["currentPassword", "newPassword", "repeatPassword"]);
      valid = checkRepeat(form, "newPassword", "repeatPassword") && valid;
      if (!valid) return showSummary(form, message("fixErrors"));
      const data = values(form);
      const result = await api("PUT", "/me/password", {
        currentPassword: data.currentPassword,
        newPassword: data.newPassword,
      });
      if (!result.ok) return showProblem(form, result.data);
      form.reset();
      showSuccess(form);
    });
    onSubmit("delete-account", async (form) => {
      if (!requireFields(form, ["confirmDelete", "password"])) return showSummary(form, message("fixErrors"));
      const result = await api("DELETE", "/me", { password: form.elements.password.value });
      if (!result.ok) return showProblem(form, result.data);
      session.token = null;
      sessionStorage.clear();
      location.assign("/app?deleted=1");
    });
    document.querySelector('[data-action="logout"]').addEventListener("click", async () => {
      await api("DELETE", "/sessions/current");
      session.token = null;
      await forgetDevice();
      location.assign("/app/login");
    });
    (await import("./push.js")).run({ api, message, forms });
  },

  async questionnaires() {
    const { loadDraft } = await import("./questionnaire.js");
    const fill = async (status, listID, emptyID) => {
      const result = await api("GET", `/me/prompts?status=${status}`);
      if (!result.ok) return;
      const list = document.getElementById(listID);
      list.replaceChildren();
      document.getElementById(emptyID).hidden = result.data.length > 0;
      for (const prompt of result.data) {
        const item = document.createElement("li");
        // A repeated questionnaire waits while a one-time one of the same study is unanswered.
        const link = document.createElement(prompt.blocked ? "div" : "a");
        if (prompt.blocked) link.className = "blocked";
        else link.href = `/app/questionnaires/${prompt.id}`;
        const title = document.createElement("span");
        title.textContent = prompt.title;
        const detail = document.createElement("span");
        detail.className = "hint tile-detail";
        if (status === "open") {
          const draft = loadDraft(prompt.id);
          const progressText = draft.progress
            ? message("progress", { answered: draft.progress.answered, total: draft.progress.total })
            : message("notStarted");
          const waiting = prompt.blocked ? ` · ${message("blocked")}` : "";
          detail.textContent = `${message("deadline", { date: formatDateTime(prompt.closesAt) })} · ${progressText}${waiting}`;
        } else {
          detail.textContent = message("completedOn", { date: formatDateTime(prompt.completedAt || prompt.closesAt) });
        }
        link.append(title, detail);
        item.append(link);
        list.append(item);
      }
    };
    await Promise.all([fill("open", "open-list", "open-empty"), fill("completed", "done-list", "done-empty")]);
    const open = await api("GET", "/me/prompts?status=open");
    if (open.ok) keepForOffline(open.data);
  },

  async questionnaire() {
    const promptId = location.pathname.split("/").pop();
    const result = await api("GET", `/me/prompts/${encodeURIComponent(promptId)}`);
    const status = document.getElementById("questionnaire-status");
    if (!result.ok) {
      status.textContent = (result.data && result.data.detail) || message("network");
      status.hidden = false;
      return;
    }
    const { prompt, definition, crisis } = result.data;
    const language = document.documentElement.lang;
    const module = await import("./questionnaire.js");
    const { localized } = await import("./instrument-logic.js");
    document.getElementById("questionnaire-title").textContent = localized(definition.title, language);
    document.title = `${localized(definition.title, language)} · Interlude`;
    setText("questionnaire-description", definition.description ? localized(definition.description, language) : "");
    setText("questionnaire-deadline", message("deadline", { date: formatDateTime(prompt.closesAt) }));
    const showFeedback = (answers) => {
      if (definition.patientFeedback) module.renderFeedback(definition, answers, language);
    };
    if (prompt.status === "completed" && prompt.responseId) {
      const response = await api("GET", `/responses/${prompt.responseId}`);
      if (!response.ok) return;
      module.runQuestionnaire({ prompt, definition, language, message, readOnlyAnswers: response.data.answers });
      status.textContent = message("readOnly");
      status.hidden = false;
      showFeedback(response.data.answers);
      return;
    }
    const draft = module.loadDraft(prompt.id);
    if (draft.queued) {
      module.runQuestionnaire({ prompt, definition, language, message, readOnlyAnswers: draft.answers });
      status.textContent = message("queued");
      status.hidden = false;
      return;
    }
    if (prompt.status === "scheduled" || (prompt.status === "expired" && !draft.completedAt)) {
      status.textContent = message(prompt.status === "scheduled" ? "notOpen" : "expired");
      status.hidden = false;
      return;
    }
    const watchCrisis = crisis ? await crisisWatcher(definition, crisis) : undefined;
    watchCrisis?.(draft.answers);
    module.runQuestionnaire({
      prompt,
      definition,
      language,
      message,
      onAnswer: watchCrisis,
      submit: async (body) => {
        const result = await api("POST", "/me/responses", body);
        if (result.status !== 0) return result;
        // No connection: the answers wait on the device under their own id and go out when it returns.
        const { enqueue } = await import("./outbox.js");
        await enqueue({ id: module.uuid(), type: "response", response: body }, definition.key);
        return { ok: true, status: 202, data: { ...body, queued: true } };
      },
      onDone: (response) => {
        const form = document.getElementById("questionnaire");
        form.querySelectorAll("input, textarea, select, button").forEach((input) => (input.disabled = true));
        document.querySelector(".sticky-actions").hidden = true;
        status.className = response.queued ? "notice warn" : "notice ok";
        status.textContent = message(response.queued ? "queued" : "submitted");
        status.hidden = false;
        status.focus?.();
        showFeedback(response.answers);
      },
    });
  },

  async appointments() {
    (await import("./appointments.js")).run();
  },

  async interventions() {
    (await import("./interventions.js")).runList({ api, message, forms });
  },

  async intervention() {
    (await import("./interventions.js")).runOne({ api, message });
  },

  async schedule() {
    (await import("./schedule.js")).run();
  },

  pairing() {
    onSubmit("pairing", async (form) => {
      if (!requireFields(form, ["code", "dateOfBirth", "gender"])) return showSummary(form, message("fixErrors"));
      const data = values(form);
      const result = await api("POST", "/me/pairing", {
        code: data.code.trim(),
        dateOfBirth: data.dateOfBirth,
        gender: data.gender,
      });
      if (!result.ok) return showProblem(form, result.data);
      location.assign("/app/therapist");
    });
  },

  async therapist() {
    const result = await api("GET", "/me/therapist");
    if (result.status === 404) {
      document.getElementById("therapist-missing").hidden = false;
      return;
    }
    if (!result.ok) return;
    const therapist = result.data;
    setText("therapist-name", therapist.fullName);
    setText("therapist-gender", genderLabel(therapist.gender));
    setText("therapist-officeAddress", therapist.officeAddress);
    const email = document.getElementById("therapist-email");
    email.textContent = therapist.email;
    email.href = `mailto:${therapist.email}`;
    const phone = document.getElementById("therapist-phone");
    phone.textContent = therapist.phone || "";
    if (therapist.phone) phone.href = `tel:${therapist.phone.replace(/[^0-9+]/g, "")}`;
    document.getElementById("therapist-card").hidden = false;
    if (therapist.emergencyNumber) {
      const emergency = document.getElementById("therapist-emergencyNumber");
      emergency.textContent = therapist.emergencyNumber;
      emergency.href = `tel:${therapist.emergencyNumber.replace(/[^0-9+]/g, "")}`;
      document.getElementById("therapist-emergency").hidden = false;
    }
  },

  async studies() {
    const list = document.getElementById("studies-list");
    const status = document.getElementById("studies-status");
    const render = async () => {
      const result = await api("GET", "/studies");
      if (!result.ok) return;
      list.replaceChildren();
      const studies = result.data.filter((study) => study.joinMode !== "pairingCode");
      if (!studies.length) {
        const empty = document.createElement("p");
        empty.textContent = message("noStudies");
        list.append(empty);
      }
      for (const study of studies) list.append(studyCard(study));
    };
    const announce = (text) => {
      status.textContent = text;
      status.hidden = false;
    };
    const studyCard = (study) => {
      const card = document.createElement("section");
      card.className = "card";
      const heading = document.createElement("h2");
      heading.textContent = study.title;
      card.append(heading);
      if (study.description) {
        const description = document.createElement("p");
        description.textContent = study.description;
        card.append(description);
      }
      const enrollment = study.enrollment;
      if (enrollment) {
        const badge = document.createElement("p");
        badge.innerHTML = '<span class="badge"></span>';
        badge.firstChild.classList.add(enrollment.status);
        badge.firstChild.textContent = message(enrollment.status === "active" ? "statusActive" : "statusRequested");
        card.append(badge);
        const leave = document.createElement("button");
        leave.type = "button";
        leave.className = "secondary";
        leave.textContent = message(enrollment.status === "active" ? "leave" : "withdraw");
        leave.addEventListener("click", async () => {
          if (!confirm(message("confirmLeave"))) return;
          const result = await api("DELETE", `/studies/${study.id}/enrollment`);
          if (result.ok) {
            announce(message("left"));
            await render();
          }
        });
        card.append(leave);
        return card;
      }
      card.append(joinForm(study));
      return card;
    };
    const joinForm = (study) => {
      const form = document.createElement("form");
      form.noValidate = true;
      const id = `study-${study.id}`;
      form.innerHTML = `
        <div class="notice error" data-summary role="alert" tabindex="-1" hidden></div>
        <details><summary></summary><div class="consent"></div></details>
        <div class="field">
          <div class="choice">
            <input type="checkbox" name="accept" id="${id}-accept">
            <label for="${id}-accept"></label>
          </div>
          <span class="error" data-for="consentVersion" hidden></span>
        </div>
        <div class="field" data-password hidden>
          <label for="${id}-password"></label>
          <input type="password" name="password" id="${id}-password" maxlength="128" autocomplete="off">
          <span class="error" data-for="password" hidden></span>
        </div>
        <button type="submit"></button>`;
      form.querySelector("summary").textContent = message("consent");
      const consent = form.querySelector(".consent");
      for (const paragraph of study.consentText.split(/\n\s*\n/)) {
        const p = document.createElement("p");
        p.textContent = paragraph;
        consent.append(p);
      }
      form.querySelector(`label[for="${id}-accept"]`).textContent = message("consentAccept");
      form.querySelector(`label[for="${id}-password"]`).textContent = message("studyPassword");
      form.querySelector("[data-password]").hidden = study.joinMode !== "password";
      form.querySelector("button").textContent = message("join");
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        clearErrors(form);
        if (!form.elements.accept.checked) {
          markField(form, "consentVersion", message("required"));
          return showSummary(form, message("fixErrors"));
        }
        const body = { consentVersion: study.consentVersion };
        if (study.joinMode === "password") body.password = form.elements.password.value;
        const result = await api("POST", `/studies/${study.id}/enrollment`, body);
        if (!result.ok) return showProblem(form, result.data);
        announce(message(result.data.status === "active" ? "joined" : "requested"));
        await render();
      });
      return form;
    };
    await render();
  },
};

// Offline -------------------------------------------------------------------------------------------------

/** Reads each open questionnaire once, so the service worker keeps it (and its definition) for offline use. */
/**
 * Shows the therapist's emergency number and crisis help as soon as an answer calls for it (PHQ-9 item 9 above
 * "not at all"); returns the check to run after every answer.
 */
async function crisisWatcher(definition, crisis) {
  const { numericValue } = await import("./instrument-logic.js");
  const items = new Map(definition.sections.flatMap((section) => section.items).map((item) => [item.id, item]));
  const panel = document.getElementById("crisis");
  if (crisis.emergencyNumber) {
    const link = document.getElementById("crisis-number");
    link.textContent = crisis.therapistName ? `${crisis.therapistName}: ${crisis.emergencyNumber}` : crisis.emergencyNumber;
    link.href = `tel:${crisis.emergencyNumber.replace(/[^+0-9]/g, "")}`;
    document.getElementById("crisis-therapist").hidden = false;
  }
  return (answers) => {
    const needed = crisis.items.some(({ itemId, above }) => {
      const item = items.get(itemId);
      const value = item && answers[itemId] !== undefined ? numericValue(definition, item, answers[itemId]) : null;
      return value !== null && value > above;
    });
    if (needed && panel.hidden) {
      panel.hidden = false;
      panel.focus();
    }
  };
}

function keepForOffline(prompts) {
  for (const prompt of prompts) api("GET", `/me/prompts/${encodeURIComponent(prompt.id)}`);
}

/** Shows how many changes wait to be sent and what the server refused, and sends them when possible. */
async function watchOutbox() {
  if (!session.token || !("indexedDB" in window)) return;
  const outbox = await import("./outbox.js");
  const status = document.getElementById("outbox-status");
  const reportList = document.getElementById("outbox-reports");
  const show = async () => {
    const waiting = await outbox.pending();
    status.textContent = message("waiting", { count: waiting.length });
    status.hidden = waiting.length === 0;
    const reports = await outbox.reports();
    reportList.replaceChildren();
    reportList.hidden = reports.length === 0;
    for (const report of reports) {
      const item = document.createElement("li");
      item.textContent = `${message(report.status === "conflict" ? "conflict" : "refused")} ${report.detail}`.trim();
      const dismiss = document.createElement("button");
      dismiss.type = "button";
      dismiss.className = "link";
      dismiss.textContent = message("dismiss");
      dismiss.addEventListener("click", () => outbox.dismiss(report.id));
      item.append(" ", dismiss);
      reportList.append(item);
    }
  };
  window.addEventListener("interlude:outbox", show);
  window.addEventListener("online", () => outbox.flush(api));
  await show();
  await outbox.flush(api);
}

/** Forgets what this device kept for the person who signs out. */
async function forgetDevice() {
  if ("caches" in window) for (const key of await caches.keys()) await caches.delete(key);
  if ("indexedDB" in window) await (await import("./outbox.js")).clear();
  localStorage.clear();
}

function registerServiceWorker() {
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/app/sw.js", { scope: "/app" }).catch(() => {});
}

// Start -----------------------------------------------------------------------------------------------------

watchConnection();
registerServiceWorker();
watchOutbox();
keepLanguageSwitchOnPage();
showSignedInParts();
if (document.querySelector("[data-requires-session]") && !session.token) {
  goToLogin(false);
} else {
  const pageName =
    document.querySelector("[data-page]")?.dataset.page ||
    document.querySelector("form[data-form]")?.dataset.form;
  pages[pageName]?.();
}
