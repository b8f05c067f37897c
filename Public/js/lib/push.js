// Notifications on the profile page: turning push on for this device (only when the person asks), and which
// notifications they want, with quiet hours.

import { api } from "./api.js";
import { onSubmit, showProblem } from "./forms.js";
import { message } from "./i18n.js";

export const DEVICE_KEY = "interlude.pushDevice";

function base64UrlToBytes(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4);
  return Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));
}

async function currentSubscription() {
  if (!("serviceWorker" in navigator) || !("PushManager" in window)) return null;
  const registration = await navigator.serviceWorker.getRegistration("/app");
  return registration ? registration.pushManager.getSubscription() : null;
}

/**
 * Whether the server stopped pushing to this device because its push service said the subscription is gone (a
 * browser drops it after an update, or after pushes it was not allowed to show).
 */
export async function pushDeviceGone() {
  const id = localStorage.getItem(DEVICE_KEY);
  if (!id) return false;
  const devices = await api("GET", "/me/devices?limit=100");
  return devices.ok && devices.data.some((device) => device.id === id && !device.active);
}

export async function runNotificationSettings() {
  const status = document.getElementById("push-status");
  const enable = document.querySelector('[data-action="push-on"]');
  const disable = document.querySelector('[data-action="push-off"]');
  if (!status) return;
  const supported = "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;

  const show = async () => {
    if (!supported) {
      status.textContent = message("pushUnsupported");
      enable.hidden = disable.hidden = true;
      return;
    }
    const gone = await pushDeviceGone();
    const subscribed = !gone && Boolean(await currentSubscription()) && Boolean(localStorage.getItem(DEVICE_KEY));
    if (Notification.permission === "denied") status.textContent = message("pushBlocked");
    else status.textContent = message(gone ? "pushGone" : subscribed ? "pushOn" : "pushOff");
    enable.hidden = subscribed || Notification.permission === "denied";
    disable.hidden = !subscribed;
  };

  enable.addEventListener("click", async () => {
    enable.disabled = true;
    try {
      if ((await Notification.requestPermission()) !== "granted") return;
      const key = await api("GET", "/push/public-key");
      if (!key.ok) return;
      const registration = await navigator.serviceWorker.ready;
      // A subscription its push service gave up is replaced by a new one.
      const stale = await registration.pushManager.getSubscription();
      if (stale && (await pushDeviceGone())) await stale.unsubscribe();
      const subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: base64UrlToBytes(key.data.publicKey),
      });
      const device = await api("POST", "/me/devices", { platform: "webpush", subscription: subscription.toJSON() });
      if (device.ok) localStorage.setItem(DEVICE_KEY, device.data.id);
      else await subscription.unsubscribe();
    } finally {
      enable.disabled = false;
      await show();
    }
  });

  disable.addEventListener("click", async () => {
    const subscription = await currentSubscription();
    if (subscription) await subscription.unsubscribe();
    const device = localStorage.getItem(DEVICE_KEY);
    if (device) await api("DELETE", `/me/devices/${encodeURIComponent(device)}`);
    localStorage.removeItem(DEVICE_KEY);
    await show();
  });

  await show();
  await runPreferences();
}

/** Which notifications the person wants, and their quiet hours. */
async function runPreferences() {
  const form = document.querySelector('form[data-form="notification-preferences"]');
  const stored = await api("GET", "/me/notification-preferences");
  if (stored.ok) {
    for (const name of ["questionnaires", "interventions", "appointments", "messages"]) {
      form.elements[name].checked = stored.data[name];
    }
    form.elements.messageEmails.value = stored.data.messageEmails || "daily";
    form.elements.quiet.checked = Boolean(stored.data.quietHours);
    form.elements.quietStart.value = stored.data.quietHours?.start || "22:00";
    form.elements.quietEnd.value = stored.data.quietHours?.end || "07:00";
  }
  onSubmit("notification-preferences", async () => {
    const body = {
      questionnaires: form.elements.questionnaires.checked,
      interventions: form.elements.interventions.checked,
      appointments: form.elements.appointments.checked,
      messages: form.elements.messages.checked,
      messageEmails: form.elements.messageEmails.value || "daily",
    };
    if (form.elements.quiet.checked) {
      body.quietHours = { start: form.elements.quietStart.value, end: form.elements.quietEnd.value };
    }
    const result = await api("PUT", "/me/notification-preferences", body);
    if (!result.ok) return showProblem(form, result.data);
    const success = form.querySelector("[data-success]");
    success.hidden = false;
  });
}
