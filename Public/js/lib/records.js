// The person's health records on the phone, one collection per kind (events, therapies, audiograms): read from
// the API, changed through it, and without a connection changed in the outbox under the record's own id, shown as
// they will be once sent. A change the server finds in conflict comes back as an outbox report.

import { api, apiList } from "./api.js";
import { message } from "./i18n.js";
import { enqueue, pending } from "./outbox.js";
import { uuid } from "./storage.js";

/** `kind` as POST /sync names it, `path` under /me, `label` naming a record for the outbox list. */
export function recordCollection({ kind, path, label }) {
  /** Changes made without a connection, laid over what the server last said. */
  const overlay = async (records) => {
    if (!("indexedDB" in window)) return records;
    const shown = [...records];
    for (const change of await pending()) {
      if (change.recordKind !== kind) continue;
      const index = shown.findIndex((item) => item.id === change.recordId);
      if (change.type === "record.create" && index < 0) {
        shown.push({ ...change.record, version: 1, pending: true });
      } else if (change.type === "record.update" && index >= 0) {
        shown[index] = { ...change.record, id: shown[index].id, version: shown[index].version, pending: true };
      } else if (change.type === "record.delete" && index >= 0) {
        shown.splice(index, 1);
      }
    }
    return shown;
  };

  const queue = async (type, record, body) => {
    const mutation = { id: uuid(), type, recordKind: kind, recordId: record ? record.id : body.id };
    if (record) mutation.baseVersion = record.version;
    if (body) mutation.record = body;
    await enqueue(mutation, label(body || record));
    return { ok: true, queued: true };
  };

  return {
    /** The records, with waiting changes laid over them; null when neither the server nor the device has them. */
    async load() {
      const result = await apiList(`/me/${path}`);
      return result.ok ? overlay(result.data) : null;
    },

    /** Creates (existing null) or changes a record; answers { ok, queued, data } like api() does. */
    async save(existing, fields) {
      const body = { id: existing ? existing.id : uuid(), ...fields };
      const result = existing
        ? await api("PATCH", `/me/${path}/${existing.id}`, { baseVersion: existing.version, ...fields })
        : await api("POST", `/me/${path}`, body);
      if (result.status === 0) return queue(existing ? "record.update" : "record.create", existing, body);
      return result;
    },

    async remove(record) {
      const result = await api("DELETE", `/me/${path}/${record.id}?baseVersion=${record.version}`);
      if (result.status === 0) return queue("record.delete", record);
      return result;
    },
  };
}

/** Says what became of a change in the page's status line, focused so a screen reader hears it. */
export function announce(text) {
  const status = document.getElementById("records-status");
  status.textContent = text;
  status.hidden = false;
  status.focus();
}

/** The text of a save or delete: queued for later, done, or the server's problem (shown by the caller). */
export function outcomeText(result, doneKey) {
  return result.queued ? message("queuedChange") : message(doneKey);
}

/** Deletes a record once the person confirms, then runs `after` (leave the form, reload) and says how it went. */
export async function removeAfterConfirming(collection, record, after) {
  if (!confirm(message("confirmDelete"))) return;
  const result = await collection.remove(record);
  if (!result.ok) return announce(result.data?.detail || message("network"));
  await after();
  announce(outcomeText(result, "recordDeleted"));
}

/** A small "waiting to be sent" badge for a record changed offline. */
export function pendingBadge() {
  const badge = document.createElement("span");
  badge.className = "badge requested";
  badge.textContent = message("pendingChange");
  return badge;
}

/** A secondary button with a data-action, for the lists' edit and delete. */
export function actionButton(action, text, onClick, danger = false) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = danger ? "secondary danger" : "secondary";
  button.dataset.action = action;
  button.textContent = text;
  button.addEventListener("click", onClick);
  return button;
}
