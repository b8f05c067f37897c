// The patient's interventions: the list, one intervention to read, do or answer, and the encrypted backup of
// the answers. Answers to questions stay on this device; the server hears only "seen" and "completed" (through
// the outbox when there is no connection).

const ANSWERS_KEY = "interlude.interventionAnswers";
const NOTICE_KEY = "interlude.answerNoticeSeen";
const BACKUP_VERSION_KEY = "interlude.backupVersion";

function read(key, fallback) {
  try {
    return JSON.parse(localStorage.getItem(key)) ?? fallback;
  } catch {
    return fallback;
  }
}

function write(key, value) {
  localStorage.setItem(key, JSON.stringify(value));
}

/** What the patient wrote or ticked, by intervention id. */
export function answers() {
  return read(ANSWERS_KEY, {});
}

function keepAnswer(id, entry) {
  const all = answers();
  all[id] = { ...all[id], ...entry };
  write(ANSWERS_KEY, all);
}

/** The ids of interventions whose `type` change ("intervention.complete", "intervention.seen") waits in the outbox. */
async function waiting(type) {
  if (!("indexedDB" in window)) return [];
  const { pending } = await import("./outbox.js");
  return (await pending()).filter((item) => item.type === type).map((item) => item.interventionId);
}

/** Keeps a change to an intervention for when the connection returns, once per kind of change. */
async function queue(type, id, label) {
  if ((await waiting(type)).includes(id)) return;
  const { enqueue } = await import("./outbox.js");
  const { uuid } = await import("./questionnaire.js");
  await enqueue({ id: uuid(), type, interventionId: id }, label);
}

function formatDateTime(value) {
  return new Date(value).toLocaleString(document.documentElement.lang, { dateStyle: "medium", timeStyle: "short" });
}

/** The list page: new ones first, then completed ones; and the backup form. */
export async function runList({ api, message, forms }) {
  const pending = await waiting("intervention.complete");
  const result = await api("GET", "/me/interventions");
  if (result.ok) {
    const local = answers();
    const fresh = result.data.filter((item) => item.state !== "completed" && !pending.includes(item.id) && !local[item.id]?.completedAt);
    const done = result.data.filter((item) => !fresh.includes(item));
    const fill = (items, listID, emptyID) => {
      const list = document.getElementById(listID);
      list.replaceChildren();
      document.getElementById(emptyID).hidden = items.length > 0;
      for (const item of items) {
        const entry = document.createElement("li");
        const link = document.createElement("a");
        link.href = `/app/interventions/${item.id}`;
        link.dataset.intervention = item.id;
        const title = document.createElement("span");
        title.textContent = message(`kind-${item.kind}`);
        if (item.state === "sent") {
          const badge = document.createElement("span");
          badge.className = "badge";
          badge.textContent = message("unseen");
          title.append(" ", badge);
        }
        const detail = document.createElement("span");
        detail.className = "hint tile-detail";
        detail.textContent = message("receivedOn", { date: formatDateTime(item.sentAt) });
        if (pending.includes(item.id)) detail.textContent += ` · ${message("waitingToSend")}`;
        link.append(title, detail);
        entry.append(link);
        list.append(entry);
      }
    };
    fill(fresh, "new-list", "new-empty");
    fill(done, "done-list", "done-empty");
  }
  runBackup({ api, message, forms });
}

function runBackup({ api, message, forms }) {
  const form = document.querySelector('form[data-form="backup"]');
  const success = form.querySelector("[data-success]");
  const passphrase = () => {
    const value = form.elements.passphrase.value;
    if (value.length < 8) {
      forms.markField(form, "passphrase", message("passphraseShort"));
      return null;
    }
    return value;
  };
  const done = (text) => {
    success.textContent = text;
    success.hidden = false;
    success.focus?.();
  };
  const { clearErrors, showSummary, showProblem, onSubmit } = forms;
  onSubmit("backup", async () => {
    const secret = passphrase();
    if (!secret) return;
    showWorking(form, message);
    const { seal } = await import("./backup-crypto.js");
    const envelope = await seal(answers(), secret);
    const result = await api("PUT", "/me/backup", { baseVersion: read(BACKUP_VERSION_KEY, 0), envelope });
    hideWorking(form);
    if (result.status === 409) return showSummary(form, message("backupNewer"));
    if (!result.ok) return showProblem(form, result.data);
    write(BACKUP_VERSION_KEY, result.data.version);
    form.elements.passphrase.value = "";
    done(message("backupSaved"));
  });
  document.getElementById("backup-restore").addEventListener("click", async () => {
    clearErrors(form);
    const secret = passphrase();
    if (!secret) return;
    const result = await api("GET", "/me/backup");
    if (result.status === 404) return showSummary(form, message("backupNone"));
    if (!result.ok) return showProblem(form, result.data);
    showWorking(form, message);
    const { open } = await import("./backup-crypto.js");
    let restored;
    try {
      restored = await open(result.data.envelope, secret);
    } catch {
      hideWorking(form);
      return forms.markField(form, "passphrase", message("backupWrongPassphrase"));
    }
    hideWorking(form);
    // What this device holds already wins over the backup's copy of the same intervention.
    write(ANSWERS_KEY, { ...restored, ...answers() });
    write(BACKUP_VERSION_KEY, result.data.version);
    form.elements.passphrase.value = "";
    done(message("backupRestored"));
  });
}

function showWorking(form, message) {
  form.querySelectorAll("button").forEach((button) => (button.disabled = true));
  form.setAttribute("aria-busy", "true");
  const summary = form.querySelector("[data-success]");
  summary.textContent = message("backupWorking");
  summary.hidden = false;
}

function hideWorking(form) {
  form.querySelectorAll("button").forEach((button) => (button.disabled = false));
  form.removeAttribute("aria-busy");
  form.querySelector("[data-success]").hidden = true;
}

/** One intervention: opening marks it seen; confirming completes it and makes it read-only. */
export async function runOne({ api, message }) {
  const id = decodeURIComponent(location.pathname.split("/").pop());
  const status = document.getElementById("intervention-status");
  const result = await api("GET", "/me/interventions");
  const item = result.ok ? result.data.find((candidate) => candidate.id === id) : null;
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

  const local = answers()[id] || {};
  const form = document.getElementById("intervention-form");
  const taskField = document.getElementById("task-field");
  const answerField = document.getElementById("answer-field");
  const answer = document.getElementById("answer");
  const done = document.getElementById("task-done");
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
  const completed = item.state === "completed" || local.completedAt || pending.includes(id);
  const showCompleted = (when, queued) => {
    form.querySelectorAll("input, textarea, button").forEach((input) => (input.disabled = true));
    document.getElementById("confirm").hidden = true;
    status.className = queued ? "notice warn" : "notice ok";
    status.textContent = queued ? message("waitingToSend") : message("completedOn", { date: formatDateTime(when) });
    status.hidden = false;
  };
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
