// Who looked at my data: the person's access log, newest first, a page at a time.

import { api } from "../lib/api.js";
import { formatDateTime } from "../lib/i18n.js";

export async function run() {
  const list = document.getElementById("access-list");
  const more = document.getElementById("access-more");
  let next = null;
  const load = async () => {
    more.disabled = true;
    const result = await api("GET", `/me/access-log?limit=50${next ? `&before=${encodeURIComponent(next)}` : ""}`);
    more.disabled = false;
    if (!result.ok) return;
    for (const entry of result.data.entries) {
      const item = document.createElement("li");
      item.dataset.action = entry.action;
      const when = document.createElement("time");
      when.dateTime = entry.occurredAt;
      when.textContent = formatDateTime(entry.occurredAt);
      const who = document.createElement("strong");
      who.textContent = entry.actor;
      const what = document.createElement("span");
      what.textContent = entry.activity;
      item.append(when, who, what);
      list.append(item);
    }
    next = result.data.next || null;
    more.hidden = !next;
    document.getElementById("access-empty").hidden = list.children.length > 0;
  };
  more.addEventListener("click", load);
  await load();
}
