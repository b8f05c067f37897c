// The person's consents: the privacy policy and each study's consent in force, what changed since the version
// they agreed to, their choices for the optional modules, and every decision so far.

import { api } from "../lib/api.js";
import { chosenModules, moduleChoices } from "../lib/consent.js";
import { showProblem } from "../lib/forms.js";
import { formatDateTime, message } from "../lib/i18n.js";
import { flush } from "../lib/outbox.js";

function paragraphs(text) {
  const box = document.createElement("div");
  box.className = "consent text-lines";
  box.textContent = text;
  return box;
}

/** The changed lines (added and removed) with a little of what stayed around them. */
function changeList(changes) {
  const list = document.createElement("ul");
  list.className = "plain consent-changes";
  for (const line of changes) {
    if (line.kind === "same" || !line.text.trim()) continue;
    const item = document.createElement(line.kind === "added" ? "ins" : "del");
    item.textContent = line.text;
    const row = document.createElement("li");
    row.dataset.kind = line.kind;
    row.append(item);
    list.append(row);
  }
  return list;
}

function documentCard(state, render, announce) {
  const card = document.createElement("section");
  card.className = "card";
  card.dataset.document = state.studyId || state.document;
  const heading = document.createElement("h2");
  heading.textContent = state.studyTitle || message("privacyPolicy");
  const version = document.createElement("p");
  version.className = "hint";
  version.textContent = `${message("version")} ${state.version}`;
  card.append(heading, version);
  if (state.collects?.length) {
    const collects = document.createElement("p");
    collects.textContent = message("collects", { kinds: state.collects.map((kind) => message(`kind-${kind}`)).join(", ") });
    card.append(collects);
  }
  const pending = state.document === "privacyPolicy" ? state.decision?.version !== state.version : state.mustAnswer;
  if (pending) {
    const notice = document.createElement("p");
    notice.className = "notice warn";
    notice.textContent = message(state.document === "privacyPolicy" ? "policyChanged" : "mustAnswer");
    card.append(notice);
  }
  if (state.changes?.length) {
    const title = document.createElement("h3");
    title.textContent = message("changes");
    card.append(title, changeList(state.changes));
  }
  const full = document.createElement("details");
  full.open = pending && !state.changes;
  const summary = document.createElement("summary");
  summary.textContent = message("fullText");
  full.append(summary, paragraphs(state.text));
  card.append(full);
  const form = document.createElement("form");
  form.noValidate = true;
  form.innerHTML = '<div class="notice error" data-summary role="alert" tabindex="-1" hidden></div>';
  const modules = moduleChoices(state.modules, `consent-${state.studyId || "policy"}`, state.decision?.modules || {});
  form.append(modules);
  const submit = document.createElement("button");
  submit.type = "submit";
  submit.textContent = message(pending ? "agree" : "saveChoices");
  const actions = document.createElement("div");
  actions.className = "actions";
  actions.append(submit);
  if (state.mustAnswer) {
    const leave = document.createElement("a");
    leave.href = "/app/studies";
    leave.textContent = message("orLeave");
    actions.append(" ", leave);
  }
  form.append(actions);
  form.hidden = !pending && state.modules.length === 0;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    submit.disabled = true;
    const body = { version: state.version, modules: chosenModules(modules) };
    if (state.studyId) body.studyId = state.studyId;
    const result = await api("POST", "/me/consents", body);
    submit.disabled = false;
    if (!result.ok) return showProblem(form, result.data);
    announce(message("agreed"));
    // Answers held back for this answer go out now.
    await flush(api);
    await render();
  });
  card.append(form);
  return card;
}

function historyItem(decision) {
  const item = document.createElement("li");
  const when = document.createElement("time");
  when.dateTime = decision.decidedAt;
  when.textContent = formatDateTime(decision.decidedAt);
  const what = document.createElement("strong");
  const name =
    decision.document === "privacyPolicy"
      ? message("privacyPolicy")
      : decision.document === "researchSharing"
        ? message("researchSharingDocument")
        : decision.studyTitle || "";
  what.textContent = `${name} · ${message("version")} ${decision.version}`;
  const detail = document.createElement("span");
  const modules = Object.entries(decision.modules || {}).map(
    ([module, granted]) => `${message(`module-${module}`)}: ${message(granted ? "granted" : "declined")}`,
  );
  if (decision.revokedAt) modules.push(`${message("revoked")} ${formatDateTime(decision.revokedAt)}`);
  else if (decision.replacedAt) modules.push(message("replaced"));
  detail.textContent = modules.join(" · ");
  item.append(when, what, detail);
  return item;
}

export async function run() {
  const list = document.getElementById("consents-list");
  const history = document.getElementById("consents-history");
  const status = document.getElementById("consents-status");
  const announce = (text) => {
    status.textContent = text;
    status.hidden = false;
    status.focus();
  };
  const render = async () => {
    const result = await api("GET", "/me/consents");
    if (!result.ok) return;
    list.replaceChildren(...result.data.documents.map((state) => documentCard(state, render, announce)));
    history.replaceChildren(...result.data.history.map(historyItem));
  };
  await render();
}
