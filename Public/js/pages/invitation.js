// Taking up a therapist's invitation: a password and the account's choices, then straight to the app, paired.

import { api } from "../lib/api.js";
import { checkRepeat, onSubmit, requireFields, showProblem, showSummary, values } from "../lib/forms.js";
import { message } from "../lib/i18n.js";
import { deviceTimeZone, fillTimeZones } from "../lib/page.js";
import { session } from "../lib/storage.js";

export async function run() {
  const token = new URLSearchParams(location.search).get("token") || "";
  const form = document.querySelector('form[data-form="invitation"]');
  fillTimeZones();
  const zone = deviceTimeZone();
  if (zone) form.elements.timeZone.value = zone;
  onSubmit("invitation", async (form) => {
    const data = values(form);
    let valid = requireFields(form, ["password", "repeatPassword", "dateOfBirth", "gender", "timeZone", "acceptPrivacy"]);
    valid = checkRepeat(form, "password", "repeatPassword") && valid;
    if (!valid) return showSummary(form, message("fixErrors"));
    const body = {
      token,
      password: data.password,
      privacyPolicyVersion: data.privacyPolicyVersion,
      shareWithResearch: data.shareWithResearch,
      locale: data.locale,
      timeZone: data.timeZone.trim(),
      dateOfBirth: data.dateOfBirth,
      gender: data.gender,
    };
    if (data.name.trim()) body.name = data.name.trim();
    const result = await api("POST", "/invitations/acceptance", body);
    if (!result.ok) return showProblem(form, result.data);
    session.token = result.data.token;
    location.assign("/app");
  });
}
