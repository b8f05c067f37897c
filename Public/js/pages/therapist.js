// The therapist's card: how to reach them, and their emergency number.

import { api } from "../lib/api.js";
import { formatDate, genderLabel, message } from "../lib/i18n.js";
import { setText } from "../lib/page.js";

export async function run() {
  await showCurrent();
  await showFormer();
}

async function showCurrent() {
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

// Therapists whose treatment ended and who still read what was shared until its end: the person may end that.
async function showFormer() {
  const result = await api("GET", "/me/treatments?limit=200");
  if (!result.ok) return;
  const former = result.data.filter((treatment) => treatment.status === "ended" && treatment.formerAccess);
  const list = document.getElementById("former-list");
  const status = document.getElementById("former-status");
  list.replaceChildren();
  for (const treatment of former) {
    const name = treatment.therapistName;
    const item = document.createElement("li");
    item.className = "card";
    const heading = document.createElement("strong");
    heading.textContent = name;
    const ended = document.createElement("p");
    ended.textContent = message("formerEnded", { date: formatDate(treatment.endedAt) });
    const stop = document.createElement("button");
    stop.type = "button";
    stop.className = "danger";
    stop.textContent = message("formerStop", { name });
    stop.addEventListener("click", async () => {
      if (!confirm(message("formerConfirm", { name }))) return;
      stop.disabled = true;
      const ended = await api("DELETE", `/me/treatments/${treatment.id}/access`);
      stop.disabled = false;
      if (!ended.ok) return;
      item.remove();
      status.textContent = message("formerDone", { name });
      status.hidden = false;
      status.focus();
      document.getElementById("former").hidden = list.children.length === 0 && status.hidden;
    });
    item.append(heading, ended, stop);
    list.append(item);
  }
  document.getElementById("former").hidden = former.length === 0;
}
