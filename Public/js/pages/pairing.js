// Pairing with a therapist by their code.

import { api } from "../lib/api.js";
import { onSubmit, requireFields, showProblem, showSummary, values } from "../lib/forms.js";
import { message } from "../lib/i18n.js";

export async function run() {
  onSubmit("pairing", async (form) => {
    if (!requireFields(form, ["code", "dateOfBirth", "gender"])) return showSummary(form, message("fixErrors"));
    const data = values(form);
    const result = await api("POST", "/me/pairing", {
      code: data.code.trim(),
      dateOfBirth: data.dateOfBirth,
      gender: data.gender,
    });
    if (!result.ok) return showProblem(form, result.data);
    location.assign("/app/therapist");
  });
}
