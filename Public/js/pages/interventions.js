// The interventions page: new ones first, then completed ones; and the encrypted backup of the answers.

import { api, apiList } from "../lib/api.js";
import { open, seal } from "../lib/backup-crypto.js";
import { clearErrors, markField, onSubmit, showProblem, showSummary } from "../lib/forms.js";
import { formatDateTime, message } from "../lib/i18n.js";
import { ANSWERS_KEY, BACKUP_VERSION_KEY, answers, waiting } from "../lib/interventions.js";
import { read, write } from "../lib/storage.js";

export async function run() {
  const pending = await waiting("intervention.complete");
  const result = await apiList("/me/interventions");
  if (result.ok) {
    const local = answers();
    const handled = (item) => pending.includes(item.id) || Boolean(local[item.id]?.completedAt);
    // New means not opened yet; everything opened waits under "Earlier", a task or question still to do marked so.
    const fresh = result.data.filter((item) => item.state === "sent" && !handled(item));
    const earlier = result.data.filter((item) => !fresh.includes(item));
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
        title.textContent = firstLine(item.text);
        const detail = document.createElement("span");
        detail.className = "hint tile-detail";
        const parts = [message(`kind-${item.kind}`), message("receivedOn", { date: formatDateTime(item.sentAt) })];
        if (pending.includes(item.id)) parts.push(message("waitingToSend"));
        else if (item.state === "completed" || local[item.id]?.completedAt) parts.push(message("completed"));
        else if (item.state === "seen" && (item.kind === "task" || item.kind === "question")) parts.push(message("toDo"));
        detail.textContent = parts.join(" · ");
        link.append(title, detail);
        entry.append(link);
        list.append(entry);
      }
    };
    fill(fresh, "new-list", "new-empty");
    fill(earlier, "done-list", "done-empty");
  }
  runBackup();
}

/** What a list shows of a message: its first line with anything in it, cut at a word. */
function firstLine(text) {
  const line = (text || "").split("\n").map((part) => part.trim()).find((part) => part) || "";
  if (line.length <= 140) return line;
  const cut = line.slice(0, 140);
  return `${cut.includes(" ") ? cut.slice(0, cut.lastIndexOf(" ")) : cut}…`;
}

function runBackup() {
  const form = document.querySelector('form[data-form="backup"]');
  const success = form.querySelector("[data-success]");
  const passphrase = () => {
    const value = form.elements.passphrase.value;
    if (value.length < 8) {
      markField(form, "passphrase", message("passphraseShort"));
      return null;
    }
    return value;
  };
  const done = (text) => {
    success.textContent = text;
    success.hidden = false;
    success.focus?.();
  };
  onSubmit("backup", async () => {
    const secret = passphrase();
    if (!secret) return;
    showWorking(form);
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
    showWorking(form);
    let restored;
    try {
      restored = await open(result.data.envelope, secret);
    } catch {
      hideWorking(form);
      return markField(form, "passphrase", message("backupWrongPassphrase"));
    }
    hideWorking(form);
    // What this device holds already wins over the backup's copy of the same intervention.
    write(ANSWERS_KEY, { ...restored, ...answers() });
    write(BACKUP_VERSION_KEY, result.data.version);
    form.elements.passphrase.value = "";
    done(message("backupRestored"));
  });
}

function showWorking(form) {
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

