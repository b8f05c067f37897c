// What the patient's interventions keep on this device: answers to questions and ticked tasks (they never reach
// the server), the backup's version, and changes waiting in the outbox. The server hears only "seen" and
// "completed".

import { enqueue, pending } from "./outbox.js";
import { read, uuid, write } from "./storage.js";

export const ANSWERS_KEY = "interlude.interventionAnswers";
export const NOTICE_KEY = "interlude.answerNoticeSeen";
export const BACKUP_VERSION_KEY = "interlude.backupVersion";
/** The person's choice (default yes) to delete these answers from the device on signing out. */
export const DELETE_ANSWERS_KEY = "interlude.deleteAnswersOnSignOut";
/** Whose answers were kept on signing out; someone else signing in here does not get them. */
export const ANSWERS_OWNER_KEY = "interlude.answersOwner";

/** After signing in: answers kept on this device by someone else are dropped, one's own are found again. */
export function claimAnswers(userId) {
  const owner = read(ANSWERS_OWNER_KEY, null);
  if (owner !== null && owner !== userId) {
    write(ANSWERS_KEY, {});
    localStorage.removeItem(BACKUP_VERSION_KEY);
  }
  localStorage.removeItem(ANSWERS_OWNER_KEY);
}

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
