// The questionnaires waiting and those answered, with how far each draft got.

import { apiList, keepForOffline } from "../lib/api.js";
import { formatDateTime, message } from "../lib/i18n.js";
import { loadDraft } from "../lib/storage.js";

export async function run() {
  const fill = async (status, listID, emptyID) => {
    const result = await apiList(`/me/prompts?status=${status}`);
    if (!result.ok) return;
    const list = document.getElementById(listID);
    list.replaceChildren();
    document.getElementById(emptyID).hidden = result.data.length > 0;
    for (const prompt of result.data) {
      const item = document.createElement("li");
      // A repeated questionnaire waits while a one-time one of the same study is unanswered.
      // A deactivated one stays listed, marked so, and opens read-only.
      const link = document.createElement(prompt.blocked ? "div" : "a");
      if (prompt.blocked) link.className = "blocked";
      else link.href = `/app/questionnaires/${prompt.id}`;
      if (prompt.status === "inactive") link.classList.add("inactive");
      const title = document.createElement("span");
      title.textContent = prompt.title;
      const detail = document.createElement("span");
      detail.className = "hint tile-detail";
      if (status === "open") {
        const draft = loadDraft(prompt.id);
        const progressText = draft.progress
          ? message("progress", { answered: draft.progress.answered, total: draft.progress.total })
          : message("notStarted");
        const waiting = prompt.blocked ? ` · ${message("blocked")}` : prompt.status === "inactive" ? ` · ${message("inactive")}` : "";
        detail.textContent = `${message("deadline", { date: formatDateTime(prompt.closesAt) })} · ${progressText}${waiting}`;
      } else {
        detail.textContent = message("completedOn", { date: formatDateTime(prompt.completedAt || prompt.closesAt) });
      }
      link.append(title, detail);
      item.append(link);
      list.append(item);
    }
  };
  await Promise.all([fill("open", "open-list", "open-empty"), fill("completed", "done-list", "done-empty")]);
  const open = await apiList("/me/prompts?status=open");
  if (open.ok) keepForOffline(open.data);
}
