// Creating an account: the address checked as it is typed, the device's time zone offered.

import { api } from "../lib/api.js";
import { checkRepeat, onSubmit, requireFields, showProblem, showSummary, values } from "../lib/forms.js";
import { message } from "../lib/i18n.js";
import { deviceTimeZone, fillTimeZones } from "../lib/page.js";
import { pendingEmail } from "../lib/storage.js";

export async function run() {
  const form = document.querySelector('form[data-form="register"]');
  fillTimeZones();
  const zone = deviceTimeZone();
  if (zone) form.elements.timeZone.value = zone;
  const email = form.elements.email;
  const status = document.getElementById("email-status");
  let timer;
  const check = async () => {
    const value = email.value.trim();
    if (!value.includes("@")) return;
    const result = await api("GET", `/accounts/email-available?email=${encodeURIComponent(value)}`);
    if (result.ok && email.value.trim() === value) {
      status.textContent = result.data.available ? message("emailAvailable") : message("emailTaken");
    }
  };
  email.addEventListener("input", () => {
    clearTimeout(timer);
    status.textContent = "";
    timer = setTimeout(check, 400);
  });
  // An address already in the field (typed before the page was ready, or kept by the browser) is checked too.
  check();
  onSubmit("register", async (form) => {
    const data = values(form);
    let valid = requireFields(form, ["email", "password", "repeatPassword", "timeZone", "acceptPrivacy"]);
    valid = checkRepeat(form, "password", "repeatPassword") && valid;
    if (!valid) return showSummary(form, message("fixErrors"));
    const body = {
      email: data.email.trim(),
      password: data.password,
      privacyPolicyVersion: data.privacyPolicyVersion,
      shareWithResearch: data.shareWithResearch,
      locale: data.locale,
      timeZone: data.timeZone.trim(),
    };
    if (data.name.trim()) body.name = data.name.trim();
    const result = await api("POST", "/accounts", body);
    if (!result.ok) return showProblem(form, result.data);
    pendingEmail.value = body.email;
    location.assign("/app/verify-pending");
  });
}
