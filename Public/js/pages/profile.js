// The profile: name, language, time zone, sharing with research, password, notifications, signing out and
// deleting the account.

import { api, loadMe } from "../lib/api.js";
import { checkRepeat, onSubmit, requireFields, showProblem, showSuccess, showSummary, values } from "../lib/forms.js";
import { countMessage, formatDate, genderLabel, message } from "../lib/i18n.js";
import { ANSWERS_KEY, ANSWERS_OWNER_KEY, BACKUP_VERSION_KEY, DELETE_ANSWERS_KEY } from "../lib/interventions.js";
import { runMessageChoices } from "../lib/message-choices.js";
import { clear as clearOutbox, flush, pending } from "../lib/outbox.js";
import { fillTimeZones, setText } from "../lib/page.js";
import { runNotificationSettings } from "../lib/push.js";
import { read, session, write } from "../lib/storage.js";

export async function run() {
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
  form.elements.shareContextWithTherapist.checked = Boolean(patient && patient.sharesContextWithTherapist);
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
      shareContextWithTherapist: data.shareContextWithTherapist,
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
  runSignOut(me);
  await runNotificationSettings();
  if (patient) await runMessageChoices();
}

/**
 * Signing out never silently destroys work: changes still waiting to be sent are named, with the choice to send
 * them first; the person decides whether their intervention answers stay on this device.
 */
function runSignOut(me) {
  const deleteAnswers = document.getElementById("deleteAnswersOnSignOut");
  deleteAnswers.checked = read(DELETE_ANSWERS_KEY, true);
  deleteAnswers.addEventListener("change", () => write(DELETE_ANSWERS_KEY, deleteAnswers.checked));
  const button = document.querySelector('[data-action="logout"]');
  const panel = document.getElementById("logout-pending");
  const signOut = async () => {
    await api("DELETE", "/sessions/current");
    session.token = null;
    await forgetDevice(me, deleteAnswers.checked);
    location.assign("/app/login");
  };
  const offer = (waiting) => {
    setText("logout-pending-count", countMessage("unsentChanges", waiting.length));
    panel.hidden = false;
    button.hidden = true;
    panel.focus();
  };
  button.addEventListener("click", async () => {
    const waiting = "indexedDB" in window ? await pending() : [];
    if (waiting.length) return offer(waiting);
    await signOut();
  });
  panel.querySelector("[data-send]").addEventListener("click", async () => {
    await flush(api);
    const waiting = await pending();
    if (!waiting.length) return signOut();
    setText("logout-pending-count", countMessage(navigator.onLine ? "unsentChanges" : "unsentOffline", waiting.length));
  });
  panel.querySelector("[data-discard]").addEventListener("click", signOut);
  panel.querySelector("[data-cancel]").addEventListener("click", () => {
    panel.hidden = true;
    button.hidden = false;
    button.focus();
  });
  button.disabled = false;
}

/**
 * Forgets what this device kept for the person who signs out; their intervention answers stay only when they
 * chose so, marked as theirs so nobody else signing in here sees them.
 */
async function forgetDevice(me, deleteAnswers) {
  if ("caches" in window) for (const key of await caches.keys()) await caches.delete(key);
  if ("indexedDB" in window) await clearOutbox();
  const kept = deleteAnswers ? null : { answers: read(ANSWERS_KEY, {}), backupVersion: read(BACKUP_VERSION_KEY, null) };
  localStorage.clear();
  write(DELETE_ANSWERS_KEY, deleteAnswers);
  if (kept) {
    write(ANSWERS_KEY, kept.answers);
    if (kept.backupVersion !== null) write(BACKUP_VERSION_KEY, kept.backupVersion);
    write(ANSWERS_OWNER_KEY, me.id);
  }
}
