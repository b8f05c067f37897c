// Asking for a password reset link.

import { api } from "../lib/api.js";
import { onSubmit, requireFields, showProblem, showSuccess, showSummary } from "../lib/forms.js";
import { message } from "../lib/i18n.js";

export async function run() {
  onSubmit("forgot-password", async (form) => {
    if (!requireFields(form, ["email"])) return showSummary(form, message("fixErrors"));
    const result = await api("POST", "/password-resets", { email: form.elements.email.value.trim() });
    if (!result.ok) return showProblem(form, result.data);
    showSuccess(form);
  });
}
