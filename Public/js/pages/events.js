// The events page: what happened, newest first, with a month calendar, a search and a type filter, and the form
// to record or change an event (offline too).

import { api } from "../lib/api.js";
import { addMonths, fromZoned, toZoned } from "../lib/calendar.js";
import { onSubmit, requireFields, showProblem, showEditing, showSummary, values } from "../lib/forms.js";
import { inLanguage, locale, message } from "../lib/i18n.js";
import { drawMonth } from "../lib/month-view.js";
import { actionButton, announce, outcomeText, pendingBadge, recordCollection, removeAfterConfirming } from "../lib/records.js";

/** What the page works on, set once by `run`. */
let zone;
let form;
let filter;
let search;
let records;
let events;
let state;
let when;

const typeName = (type) => [...filter.options].find((option) => option.value === type)?.textContent || type;

const today = () => toZoned(Date.now(), zone).date;

/** Every word of the search in the title, the description or the type's name, as the server searches. */
function shown() {
  const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
  return state.events.filter((event) => {
    if (filter.value && event.type !== filter.value) return false;
    const text = [event.title, event.description || "", event.type, typeName(event.type)].join(" ").toLowerCase();
    return words.every((word) => text.includes(word));
  });
}

async function load() {
  const loaded = await events.load();
  if (!loaded) return;
  state.events = loaded.sort((a, b) => b.occurredAt.localeCompare(a.occurredAt));
  render();
}

function render() {
  const list = document.getElementById("events-list");
  list.replaceChildren();
  const visible = shown();
  document.getElementById("events-empty").hidden = visible.length > 0;
  document.getElementById("events-count").textContent =
    search.value || filter.value ? message("count", { count: visible.length, total: state.events.length }) : "";
  for (const event of visible) {
    const item = document.createElement("li");
    item.className = "appointment card";
    item.dataset.id = event.id;
    item.dataset.date = toZoned(event.occurredAt, zone).date;
    const title = document.createElement("h3");
    title.textContent = event.title;
    if (event.pending) title.append(" ", pendingBadge());
    const meta = document.createElement("p");
    meta.className = "when";
    meta.textContent = `${when.format(new Date(event.occurredAt))} · ${typeName(event.type)}`;
    item.append(title, meta);
    if (event.description) {
      const description = document.createElement("p");
      description.className = "hint";
      description.textContent = event.description;
      item.append(description);
    }
    const actions = document.createElement("div");
    actions.className = "actions";
    actions.append(
      actionButton("edit", message("edit"), () => startEditing(event)),
      actionButton("delete", message("delete"), () => remove(event), true),
    );
    item.append(actions);
    list.append(item);
  }
  const byDay = new Map();
  for (const event of visible) {
    const day = toZoned(event.occurredAt, zone).date;
    byDay.set(day, [...(byDay.get(day) || []), event.title]);
  }
  drawMonth({
    month: state.month,
    today: today(),
    byDay,
    describe: (titles) => message("eventsOn", { titles: titles.join(", ") }),
    markClass: "has-appointment",
  });
}

const remove = (event) =>
  removeAfterConfirming(events, event, async () => {
    if (state.editing === event.id) stopEditing();
    await load();
  });

function startEditing(event) {
  state.editing = event.id;
  const at = toZoned(event.occurredAt, zone);
  form.elements.title.value = event.title;
  form.elements.date.value = at.date;
  form.elements.time.value = at.time;
  if (![...form.elements.type.options].some((option) => option.value === event.type)) {
    form.elements.type.append(new Option(typeName(event.type), event.type));
  }
  form.elements.type.value = event.type;
  form.elements.description.value = event.description || "";
  showEditing(form, true);
  form.elements.title.focus();
}

function stopEditing() {
  state.editing = null;
  showEditing(form, false);
}

async function submit() {
  const data = values(form);
  if (!requireFields(form, ["title", "date", "time", "type"])) return showSummary(form, message("fixErrors"));
  const fields = {
    title: data.title.trim(),
    occurredAt: fromZoned(data.date, data.time, zone),
    type: data.type,
  };
  if (data.description.trim()) fields.description = data.description.trim();
  const editing = state.events.find((event) => event.id === state.editing);
  const result = await events.save(editing, fields);
  if (!result.ok) return showProblem(form, result.data);
  stopEditing();
  state.month = toZoned(fields.occurredAt, zone).date.slice(0, 7);
  await load();
  announce(outcomeText(result, "recordSaved"));
}

export async function run() {
  const me = await api("GET", "/me");
  if (!me.ok) return;
  zone = me.data.timeZone;
  if (zone !== Intl.DateTimeFormat().resolvedOptions().timeZone) {
    const note = document.getElementById("events-zone");
    note.textContent = message("zone", { zone });
    note.hidden = false;
  }
  form = document.querySelector('form[data-form="event"]');
  filter = document.getElementById("events-filter");
  search = document.getElementById("events-search");
  records = me.data.patient?.records;
  for (const type of records?.eventTypes || []) {
    // Kept under its own name; shown by the name in the person's language where the study gave one.
    const name = inLanguage(records.eventTypeNames?.[type], type).text;
    for (const select of [filter, form.elements.type]) select.append(new Option(name, type));
  }
  events = recordCollection({ kind: "event", path: "events", label: (event) => event.title });
  state = { events: [], month: today().slice(0, 7), editing: null };
  when = new Intl.DateTimeFormat(locale(), { dateStyle: "full", timeStyle: "short", timeZone: zone });

  onSubmit("event", submit);
  form.querySelector('[data-action="cancel-edit"]').addEventListener("click", stopEditing);
  search.addEventListener("input", render);
  filter.addEventListener("change", render);
  document.querySelector('[data-action="previous-month"]').addEventListener("click", () => {
    state.month = addMonths(state.month, -1);
    render();
  });
  document.querySelector('[data-action="next-month"]').addEventListener("click", () => {
    state.month = addMonths(state.month, 1);
    render();
  });
  document.querySelector('[data-action="today"]').addEventListener("click", () => {
    state.month = today().slice(0, 7);
    render();
  });
  window.addEventListener("interlude:outbox", () => navigator.onLine && load());
  await load();
}
