// What the patient's interventions keep on this device: answers to questions and ticked tasks (they never reach
// the server), the backup's version, and changes waiting in the outbox. The server hears only "seen" and
// "completed".

import { enqueue, pending } from "./outbox.js";
import { read, uuid, write } from "./storage.js";

export const ANSWERS_KEY = "interlude.interventionAnswers";
export const NOTICE_KEY = "interlude.answerNoticeSeen";
export const BACKUP_VERSION_KEY = "interlude.backupVersion";

/** What the patient wrote or ticked, by intervention id. */
export function answers() {
  return read(ANSWERS_KEY, {});
}

export function keepAnswer(id, entry) {
  const all = answers();
  all[id] = { ...all[id], ...entry };
  write(ANSWERS_KEY, all);
}

/** The ids of interventions whose `type` change ("intervention.complete", "intervention.seen") waits in the outbox. */
export async function waiting(type) {
  if (!("indexedDB" in window)) return [];
  return (await pending()).filter((item) => item.type === type).map((item) => item.interventionId);
}

/** Keeps a change to an intervention for when the connection returns, once per kind of change. */
export async function queue(type, id, label) {
  if ((await waiting(type)).includes(id)) return;
  await enqueue({ id: uuid(), type, interventionId: id }, label);
}
