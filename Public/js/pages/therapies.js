// The therapies page: treatments grouped by type, groups with an ongoing one first and within a group the ongoing
// ones first, then the newest; the form to record or change one (offline too).

import { api } from "../lib/api.js";
import { toZoned } from "../lib/calendar.js";
import { markField, onSubmit, requireFields, showProblem, showEditing, showSummary, values } from "../lib/forms.js";
import { formatDate, message } from "../lib/i18n.js";
import { actionButton, announce, outcomeText, pendingBadge, recordCollection, removeAfterConfirming } from "../lib/records.js";

/** What the page works on, set once by `run`. */
let zone;
let form;
let therapies;
let state;
let kinds;

const kindName = (type) => kinds.find((option) => option.value === type)?.textContent || type;

const kindIndex = (type) => kinds.findIndex((option) => option.value === type);

/** Started and not ended today, in the person's zone (also for a change still waiting to be sent). */
function ongoing(therapy) {
  const today = toZoned(Date.now(), zone).date;
  return therapy.startDate <= today && (!therapy.endDate || today <= therapy.endDate);
}

function groups() {
  const byKind = new Map();
  for (const therapy of state.therapies) byKind.set(therapy.type, [...(byKind.get(therapy.type) || []), therapy]);
  for (const members of byKind.values()) {
    members.sort((a, b) => ongoing(b) - ongoing(a) || b.startDate.localeCompare(a.startDate));
  }
  return [...byKind.entries()].sort(
    ([kindA, a], [kindB, b]) => ongoing(b[0]) - ongoing(a[0]) || kindIndex(kindA) - kindIndex(kindB),
  );
}

async function load() {
  const loaded = await therapies.load();
  if (!loaded) return;
  state.therapies = loaded;
  render();
}

function render() {
  const container = document.getElementById("therapies-groups");
  container.replaceChildren();
  document.getElementById("therapies-empty").hidden = state.therapies.length > 0;
  for (const [kind, members] of groups()) {
    const section = document.createElement("section");
    section.className = "therapy-group";
    section.dataset.type = kind;
    const heading = document.createElement("h2");
    heading.textContent = kindName(kind);
    const list = document.createElement("ul");
    list.className = "appointments";
    for (const therapy of members) list.append(item(therapy));
    section.append(heading, list);
    container.append(section);
  }
}

function item(therapy) {
  const entry = document.createElement("li");
  entry.className = "appointment card";
  entry.dataset.id = therapy.id;
  const title = document.createElement("h3");
  title.textContent = therapy.name;
  if (ongoing(therapy)) {
    entry.classList.add("next");
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.textContent = message("ongoing");
    title.append(" ", badge);
  }
  if (therapy.pending) title.append(" ", pendingBadge());
  const span = document.createElement("p");
  span.className = "when";
  span.textContent = therapy.endDate
    ? message("span", { start: formatDate(therapy.startDate), end: formatDate(therapy.endDate) })
    : message("since", { start: formatDate(therapy.startDate) });
  entry.append(title, span);
  if (therapy.note) {
    const note = document.createElement("p");
    note.className = "hint";
    note.textContent = therapy.note;
    entry.append(note);
  }
  const actions = document.createElement("div");
  actions.className = "actions";
  actions.append(
    actionButton("edit", message("edit"), () => startEditing(therapy)),
    actionButton("delete", message("delete"), () => remove(therapy), true),
  );
  entry.append(actions);
  return entry;
}

const remove = (therapy) =>
  removeAfterConfirming(therapies, therapy, async () => {
    if (state.editing === therapy.id) stopEditing();
    await load();
  });

function startEditing(therapy) {
  state.editing = therapy.id;
  form.elements.name.value = therapy.name;
  form.elements.type.value = therapy.type;
  form.elements.startDate.value = therapy.startDate;
  form.elements.endDate.value = therapy.endDate || "";
  form.elements.note.value = therapy.note || "";
  showEditing(form, true);
  form.elements.name.focus();
}

function stopEditing() {
  state.editing = null;
  showEditing(form, false);
}

async function submit() {
  const data = values(form);
  let valid = requireFields(form, ["name", "type", "startDate"]);
  if (data.endDate && data.startDate && data.endDate < data.startDate) {
    markField(form, "endDate", message("endBeforeStart"));
    valid = false;
  }
  if (!valid) return showSummary(form, message("fixErrors"));
  const fields = { name: data.name.trim(), type: data.type, startDate: data.startDate };
  if (data.endDate) fields.endDate = data.endDate;
  if (data.note.trim()) fields.note = data.note.trim();
  const editing = state.therapies.find((therapy) => therapy.id === state.editing);
  const result = await therapies.save(editing, fields);
  if (!result.ok) return showProblem(form, result.data);
  stopEditing();
  await load();
  announce(outcomeText(result, "recordSaved"));
}

export async function run() {
  const me = await api("GET", "/me");
  if (!me.ok) return;
  zone = me.data.timeZone;
  form = document.querySelector('form[data-form="therapy"]');
  kinds = [...form.elements.type.options].filter((option) => option.value);
  therapies = recordCollection({ kind: "therapy", path: "therapies", label: (therapy) => therapy.name });
  state = { therapies: [], editing: null };

  onSubmit("therapy", submit);
  form.querySelector('[data-action="cancel-edit"]').addEventListener("click", stopEditing);
  window.addEventListener("interlude:outbox", () => navigator.onLine && load());
  await load();
}
