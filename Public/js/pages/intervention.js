// One intervention: opening marks it seen; confirming completes it and makes it read-only.

import { api, apiList } from "../lib/api.js";
import { formatDateTime, message } from "../lib/i18n.js";
import { NOTICE_KEY, answers, keepAnswer, queue, waiting } from "../lib/interventions.js";

/** What the page works on, set once by `run`. */
let id;
let status;
let item;
let local;
let form;
let taskField;
let answerField;
let answer;
let done;
let completed;

function showCompleted(when, queued) {
  form.querySelectorAll("input, textarea, button").forEach((input) => (input.disabled = true));
  document.getElementById("confirm").hidden = true;
  status.className = queued ? "notice warn" : "notice ok";
  status.textContent = queued ? message("waitingToSend") : message("completedOn", { date: formatDateTime(when) });
  status.hidden = false;
}

export async function run() {
  id = decodeURIComponent(location.pathname.split("/").pop());
  status = document.getElementById("intervention-status");
  const result = await apiList("/me/interventions");
  item = result.ok ? result.data.find((candidate) => candidate.id === id) : null;
  if (!item) {
    status.textContent = result.ok ? message("notFound") : result.data.detail;
    status.hidden = false;
    return;
  }
  document.getElementById("intervention-kind").textContent = message(`kind-${item.kind}`);
  document.getElementById("intervention-date").textContent = message("receivedOn", { date: formatDateTime(item.sentAt) });
  document.getElementById("intervention-text").textContent = item.text;
  if (item.state === "sent") {
    api("POST", `/me/interventions/${encodeURIComponent(id)}/seen`).then((seen) => {
      if (seen.status === 0) queue("intervention.seen", id, message(`kind-${item.kind}`));
    });
  }

  local = answers()[id] || {};
  form = document.getElementById("intervention-form");
  taskField = document.getElementById("task-field");
  answerField = document.getElementById("answer-field");
  answer = document.getElementById("answer");
  done = document.getElementById("task-done");
  taskField.hidden = item.kind !== "task";
  answerField.hidden = item.kind !== "question";
  answer.value = local.answer || "";
  done.checked = Boolean(local.done);
  form.hidden = false;

  if (item.kind === "question" && !localStorage.getItem(NOTICE_KEY)) {
    const notice = document.getElementById("answer-notice");
    notice.hidden = false;
    document.getElementById("answer-notice-ok").addEventListener("click", () => {
      localStorage.setItem(NOTICE_KEY, "1");
      notice.hidden = true;
      answer.focus();
    });
  }
  // Every keystroke is kept on the device at once.
  answer.addEventListener("input", () => keepAnswer(id, { answer: answer.value }));
  done.addEventListener("change", () => keepAnswer(id, { done: done.checked }));

  const pending = await waiting("intervention.complete");
  completed = item.state === "completed" || local.completedAt || pending.includes(id);
  if (completed) {
    showCompleted(item.completedAt || local.completedAt, pending.includes(id));
    return;
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    status.hidden = true;
    if (item.kind === "task" && !done.checked) {
      status.className = "notice error";
      status.textContent = message("taskRequired");
      status.hidden = false;
      return;
    }
    if (item.kind === "question" && !answer.value.trim()) {
      status.className = "notice error";
      status.textContent = message("answerRequired");
      status.hidden = false;
      answer.focus();
      return;
    }
    const completedAt = new Date().toISOString();
    keepAnswer(id, { answer: answer.value, done: done.checked, completedAt });
    const sent = await api("POST", `/me/interventions/${encodeURIComponent(id)}/completion`);
    // No connection: the completion waits in the outbox under its own id and goes out when it returns.
    const offline = sent.status === 0;
    if (offline) await queue("intervention.complete", id, message(`kind-${item.kind}`));
    showCompleted(completedAt, offline);
  });
}
