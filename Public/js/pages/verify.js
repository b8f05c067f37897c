// Opening the link of a verification email.

import { api } from "../lib/api.js";
import { message } from "../lib/i18n.js";
import { setText } from "../lib/page.js";
import { pendingEmail } from "../lib/storage.js";

export async function run() {
  const token = new URLSearchParams(location.search).get("token") || "";
  const result = await api("POST", "/accounts/verification", { token });
  document.getElementById("verify-working").hidden = true;
  const alreadyVerified = result.status === 409;
  if (result.ok || alreadyVerified) {
    pendingEmail.value = "";
    document.getElementById("verify-done").hidden = false;
    return;
  }
  const reason = (result.data && result.data.errors && result.data.errors[0] && result.data.errors[0].detail) ||
    (result.data && result.data.detail) || message("verifyFailed");
  setText("verify-reason", reason);
  document.getElementById("verify-failed").hidden = false;
}
