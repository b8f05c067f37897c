// Waiting for the verification email: sending it again, or correcting the address it went to.

import { api } from "../lib/api.js";
import { onSubmit, requireFields, showProblem, showSuccess, showSummary, values } from "../lib/forms.js";
import { message } from "../lib/i18n.js";
import { setText } from "../lib/page.js";
import { pendingEmail } from "../lib/storage.js";

export async function run() {
  const pending = pendingEmail.value;
  setText("pending-email", pending);
  for (const name of ["resend", "correct-email"]) {
    const form = document.querySelector(`form[data-form="${name}"]`);
    if (form && pending) form.elements.email.value = pending;
  }
  onSubmit("resend", async (form) => {
    if (!requireFields(form, ["email"])) return showSummary(form, message("fixErrors"));
    const result = await api("POST", "/accounts/verification-email", { email: form.elements.email.value.trim() });
    if (!result.ok) return showProblem(form, result.data);
    showSuccess(form);
  });
  onSubmit("correct-email", async (form) => {
    if (!requireFields(form, ["email", "password", "newEmail"])) return showSummary(form, message("fixErrors"));
    const data = values(form);
    const result = await api("POST", "/accounts/email-correction", {
      email: data.email.trim(),
      password: data.password,
      newEmail: data.newEmail.trim(),
    });
    if (!result.ok) return showProblem(form, result.data);
    pendingEmail.value = data.newEmail.trim();
    setText("pending-email", data.newEmail.trim());
    showSuccess(form);
  });
}
