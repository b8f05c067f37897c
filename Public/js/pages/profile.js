// The profile: name, language, time zone, sharing with research, password, notifications, signing out and
// deleting the account.

import { api, loadMe } from "../lib/api.js";
import { checkRepeat, onSubmit, requireFields, showProblem, showSuccess, showSummary, values } from "../lib/forms.js";
import { formatDate, genderLabel, message } from "../lib/i18n.js";
import { clear as clearOutbox } from "../lib/outbox.js";
import { fillTimeZones, setText } from "../lib/page.js";
import { runNotificationSettings } from "../lib/push.js";
import { session } from "../lib/storage.js";

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
  await runNotificationSettings();
}

/** Forgets what this device kept for the person who signs out. */
async function forgetDevice() {
  if ("caches" in window) for (const key of await caches.keys()) await caches.delete(key);
  if ("indexedDB" in window) await clearOutbox();
  localStorage.clear();
}
