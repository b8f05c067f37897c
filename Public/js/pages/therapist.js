// The therapist's card: how to reach them, and their emergency number.

import { api } from "../lib/api.js";
import { genderLabel } from "../lib/i18n.js";
import { setText } from "../lib/page.js";

export async function run() {
  const result = await api("GET", "/me/therapist");
  if (result.status === 404) {
    document.getElementById("therapist-missing").hidden = false;
    return;
  }
  if (!result.ok) return;
  const therapist = result.data;
  setText("therapist-name", therapist.fullName);
  setText("therapist-gender", genderLabel(therapist.gender));
  setText("therapist-officeAddress", therapist.officeAddress);
  const email = document.getElementById("therapist-email");
  email.textContent = therapist.email;
  email.href = `mailto:${therapist.email}`;
  const phone = document.getElementById("therapist-phone");
  phone.textContent = therapist.phone || "";
  if (therapist.phone) phone.href = `tel:${therapist.phone.replace(/[^0-9+]/g, "")}`;
  document.getElementById("therapist-card").hidden = false;
  if (therapist.emergencyNumber) {
    const emergency = document.getElementById("therapist-emergencyNumber");
    emergency.textContent = therapist.emergencyNumber;
    emergency.href = `tel:${therapist.emergencyNumber.replace(/[^0-9+]/g, "")}`;
    document.getElementById("therapist-emergency").hidden = false;
  }
}
