// One questionnaire: answered on the device, sent when complete (or kept in the outbox without a connection),
// with crisis help as soon as an answer calls for it.

import { api } from "../lib/api.js";
import { capturePosition, measureNoise } from "../lib/context-capture.js";
import { formatDateTime, message } from "../lib/i18n.js";
import { localized, numericValue } from "../lib/instrument-logic.js";
import { enqueue } from "../lib/outbox.js";
import { setText } from "../lib/page.js";
import { renderFeedback, runQuestionnaire } from "../lib/questionnaire.js";
import { loadDraft, uuid } from "../lib/storage.js";

function showFeedback(definition, answers, language) {
  if (definition.patientFeedback) renderFeedback(definition, answers, language);
}

/**
 * Sends the answers, with the context the person kept; while the study waits for an answer to its new consent, or
 * without a connection, they wait on the device under their own id and go out later.
 */
async function sendAnswers(answered, definition, context) {
  const kept = context?.kept();
  let body = kept ? { ...answered, context: kept } : answered;
  let result = await api("POST", "/me/responses", body);
  if (kept && result.status === 422 && result.data?.errors?.some((error) => error.field === "context")) {
    // The person withdrew their context consent elsewhere since this page opened: the answers go without it.
    body = answered;
    result = await api("POST", "/me/responses", body);
  }
  if (result.status === 409 && result.data?.type === "/problems/consent-required") {
    // The study asks for an answer to its new consent first: the answers wait here until then.
    await enqueue({ id: uuid(), type: "response", response: body }, definition.key);
    window.dispatchEvent(new CustomEvent("interlude:consent-needed"));
    return { ok: true, status: 202, data: { ...body, queued: true } };
  }
  if (result.status !== 0) return result;
  // No connection: the answers wait on the device under their own id and go out when it returns.
  await enqueue({ id: uuid(), type: "response", response: body }, definition.key);
  return { ok: true, status: 202, data: { ...body, queued: true } };
}

/** The questionnaire once sent or kept: nothing more to change, what happened, the outro and the feedback. */
function showDone(response, definition, language, status) {
  const form = document.getElementById("questionnaire");
  form.querySelectorAll("input, textarea, select, button").forEach((input) => (input.disabled = true));
  document.querySelector(".sticky-actions").hidden = true;
  status.className = response.queued ? "notice warn" : "notice ok";
  status.textContent = message(response.queued ? "queued" : "submitted");
  status.hidden = false;
  status.focus?.();
  if (definition.outro) setText("questionnaire-outro", localized(definition.outro, language));
  document.getElementById("questionnaire-outro").hidden = !definition.outro;
  showFeedback(definition, response.answers, language);
}

export async function run() {
  const promptId = location.pathname.split("/").pop();
  const result = await api("GET", `/me/prompts/${encodeURIComponent(promptId)}`);
  const status = document.getElementById("questionnaire-status");
  if (!result.ok) {
    status.textContent = (result.data && result.data.detail) || message("network");
    status.hidden = false;
    return;
  }
  const { prompt, definition, crisis, contextGranted } = result.data;
  const language = document.documentElement.lang;
  document.getElementById("questionnaire-title").textContent = localized(definition.title, language);
  document.title = `${localized(definition.title, language)} · Interlude`;
  setText("questionnaire-description", definition.description ? localized(definition.description, language) : "");
  setText("questionnaire-deadline", message("deadline", { date: formatDateTime(prompt.closesAt) }));
  if (prompt.status === "completed" && prompt.responseId) {
    const response = await api("GET", `/responses/${prompt.responseId}`);
    if (!response.ok) return;
    runQuestionnaire({ prompt, definition, language, readOnlyAnswers: response.data.answers });
    status.textContent = message("readOnly");
    status.hidden = false;
    showFeedback(definition, response.data.answers, language);
    return;
  }
  const draft = loadDraft(prompt.id);
  if (draft.queued) {
    runQuestionnaire({ prompt, definition, language, readOnlyAnswers: draft.answers });
    status.textContent = message("queued");
    status.hidden = false;
    return;
  }
  if (prompt.status === "inactive") {
    runQuestionnaire({ prompt, definition, language, readOnlyAnswers: draft.answers });
    status.textContent = message("inactive");
    status.hidden = false;
    return;
  }
  if (prompt.status === "scheduled" || (prompt.status === "expired" && !draft.completedAt)) {
    status.textContent = message(prompt.status === "scheduled" ? "notOpen" : "expired");
    status.hidden = false;
    return;
  }
  const watchCrisis = crisis ? crisisWatcher(definition, crisis) : undefined;
  watchCrisis?.(draft.answers);
  const context = contextGranted ? captureContext(definition.context || []) : undefined;
  runQuestionnaire({
    prompt,
    definition,
    language,
    message,
    onAnswer: watchCrisis,
    submit: (answered) => sendAnswers(answered, definition, context),
    onDone: (response) => showDone(response, definition, language, status),
  });
}

/**
 * Measures what the questionnaire asks for while it is answered and shows it; answers what the person left
 * ticked, once measured, or undefined.
 */
function captureContext(kinds) {
  if (!kinds.length) return undefined;
  const captured = {};
  document.getElementById("context").hidden = false;
  const show = (kind, measuring, describe) => {
    document.querySelector(`[data-context=${kind}]`).hidden = false;
    const output = document.getElementById(`context-${kind}`);
    measuring.then((value) => {
      captured[kind] = value;
      output.textContent = value ? describe(value) : message("contextUnavailable");
      document.getElementById(`context-${kind}-keep`).disabled = !value;
    });
  };
  if (kinds.includes("location")) {
    show("location", capturePosition(), (position) =>
      message("contextPosition", {
        latitude: position.latitude.toFixed(4),
        longitude: position.longitude.toFixed(4),
        accuracy: Math.round(position.accuracyM),
      }),
    );
  }
  if (kinds.includes("noise")) {
    show("noise", measureNoise(), (noise) => message("contextLevel", { dbfs: noise.dbfs.toFixed(1), seconds: noise.durationS }));
  }
  return {
    kept() {
      const kept = {};
      for (const kind of ["location", "noise"]) {
        if (captured[kind] && document.getElementById(`context-${kind}-keep`).checked) kept[kind] = captured[kind];
      }
      return Object.keys(kept).length ? kept : undefined;
    },
  };
}

/**
 * Shows the therapist's emergency number and crisis help as soon as an answer calls for it (PHQ-9 item 9 above
 * "not at all"); returns the check to run after every answer.
 */
function crisisWatcher(definition, crisis) {
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
