// Signing in; the page asked for before comes back afterwards.

import { api } from "../lib/api.js";
import { onSubmit, requireFields, showProblem, showSummary, values } from "../lib/forms.js";
import { message } from "../lib/i18n.js";
import { claimAnswers } from "../lib/interventions.js";
import { safeNext } from "../lib/navigation.js";
import { pendingEmail, session } from "../lib/storage.js";

export async function run() {
  if (new URLSearchParams(location.search).has("expired")) {
    const form = document.querySelector('form[data-form="login"]');
    showSummary(form, message("sessionEnded"));
  }
  onSubmit("login", async (form) => {
    document.getElementById("unverified").hidden = true;
    if (!requireFields(form, ["email", "password"])) return showSummary(form, message("fixErrors"));
    const data = values(form);
    const result = await api("POST", "/sessions", { email: data.email.trim(), password: data.password });
    if (result.status === 403 && result.data && result.data.type === "/problems/email-not-verified") {
      pendingEmail.value = data.email.trim();
      document.getElementById("unverified").hidden = false;
      return;
    }
    if (!result.ok) return showProblem(form, result.data);
    session.token = result.data.token;
    claimAnswers(result.data.user?.id);
    const next = new URLSearchParams(location.search).get("next");
    location.assign(safeNext(next, "/app"));
  });
}
