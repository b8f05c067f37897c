// Choosing a new password from a reset link.

import { api } from "../lib/api.js";
import { checkRepeat, onSubmit, requireFields, showProblem, showSuccess, showSummary } from "../lib/forms.js";
import { message } from "../lib/i18n.js";
import { session } from "../lib/storage.js";

export async function run() {
  const token = new URLSearchParams(location.search).get("token") || "";
  onSubmit("reset-password", async (form) => {
    let valid = requireFields(form, ["newPassword", "repeatPassword"]);
    valid = checkRepeat(form, "newPassword", "repeatPassword") && valid;
    if (!valid) return showSummary(form, message("fixErrors"));
    const result = await api("POST", "/password-resets/confirmation", {
      token,
      newPassword: form.elements.newPassword.value,
    });
    if (!result.ok) return showProblem(form, result.data);
    session.token = null;
    form.querySelectorAll(".field, button[type=submit]").forEach((node) => (node.hidden = true));
    showSuccess(form);
  });
}
