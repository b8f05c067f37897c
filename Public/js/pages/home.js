// The home page: a greeting, how many questionnaires and interventions wait, the health records the person's
// studies collect, and the way to the therapist.

import { apiList, keepForOffline, loadMe } from "../lib/api.js";
import { message } from "../lib/i18n.js";
import { setText } from "../lib/page.js";
import { session } from "../lib/storage.js";

export async function run() {
  if (new URLSearchParams(location.search).has("deleted")) document.getElementById("deleted-notice").hidden = false;
  if (!session.token) return;
  const me = await loadMe();
  if (!me) return;
  setText("greeting", `${message("greeting")} ${me.name || me.email}`);
  const open = await apiList("/me/prompts");
  if (open.ok && open.data.length) {
    const badge = document.getElementById("open-count");
    badge.textContent = String(open.data.length);
    badge.hidden = false;
    keepForOffline(open.data);
  }
  const received = await apiList("/me/interventions");
  const unseen = received.ok ? received.data.filter((item) => item.state === "sent").length : 0;
  if (unseen) {
    const badge = document.getElementById("new-interventions");
    badge.textContent = String(unseen);
    badge.hidden = false;
  }
  const collected = me.patient?.records?.collects || [];
  document.querySelectorAll("[data-record]").forEach((tile) => (tile.hidden = !collected.includes(tile.dataset.record)));
  document.getElementById("health-data-tile").hidden = !(me.patient?.records?.sampleTypes || []).length;
  const paired = me.patient && me.patient.paired;
  document.getElementById("pairing-hint").hidden = paired;
  document.getElementById("therapist-tile").hidden = !paired;
}
