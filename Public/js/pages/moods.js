// The mood page: how the person feels, on a slider that starts nowhere (no answer is suggested), at a moment they
// may change, with a note for themselves; their reports newest first, changed or deleted one by one (offline too).

import { fromZoned, toZoned } from "../lib/calendar.js";
import { api } from "../lib/api.js";
import { markField, onSubmit, requireFields, showEditing, showProblem, showSummary, values } from "../lib/forms.js";
import { formatDateTime, message } from "../lib/i18n.js";
import { actionButton, announce, outcomeText, pendingBadge, recordCollection, removeAfterConfirming } from "../lib/records.js";

/** What the page works on, set once by `run`. */
let zone;
let form;
let slider;
let moods;
let state;

const percent = (valence) => Math.round(valence * 100);

/** The slider shows no position until the person moves it. */
function setSlider(valence) {
  slider.classList.toggle("untouched", valence === null);
  slider.value = valence === null ? "0.5" : String(valence);
  slider.setAttribute("aria-valuetext", valence === null ? message("notChosen") : message("valenceText", { percent: percent(valence) }));
}

function setMoment(instant) {
  const at = toZoned(instant, zone);
  form.elements.date.value = at.date;
  form.elements.time.value = at.time;
}

async function load() {
  const loaded = await moods.load();
  if (!loaded) return;
  state.moods = loaded.sort((a, b) => b.recordedAt.localeCompare(a.recordedAt));
  render();
}

function render() {
  const list = document.getElementById("moods-list");
  list.replaceChildren(...state.moods.map(item));
  document.getElementById("moods-empty").hidden = state.moods.length > 0;
}

function item(mood) {
  const entry = document.createElement("li");
  entry.className = "appointment card";
  entry.dataset.id = mood.id;
  const title = document.createElement("h3");
  title.textContent = formatDateTime(mood.recordedAt);
  if (mood.pending) title.append(" ", pendingBadge());
  const meter = document.createElement("meter");
  meter.min = 0;
  meter.max = 1;
  meter.value = mood.valence;
  meter.textContent = message("valenceText", { percent: percent(mood.valence) });
  const value = document.createElement("p");
  value.className = "when";
  value.textContent = message("valenceText", { percent: percent(mood.valence) });
  entry.append(title, meter, value);
  if (mood.note) {
    const note = document.createElement("p");
    note.className = "hint";
    note.textContent = mood.note;
    entry.append(note);
  }
  const actions = document.createElement("div");
  actions.className = "actions";
  actions.append(
    actionButton("edit", message("edit"), () => startEditing(mood)),
    actionButton("delete", message("delete"), () => remove(mood), true),
  );
  entry.append(actions);
  return entry;
}

const remove = (mood) =>
  removeAfterConfirming(moods, mood, async () => {
    if (state.editing === mood.id) stopEditing();
    await load();
  });

function startEditing(mood) {
  state.editing = mood.id;
  setSlider(mood.valence);
  setMoment(mood.recordedAt);
  form.elements.note.value = mood.note || "";
  showEditing(form, true);
  slider.focus();
}

function stopEditing() {
  state.editing = null;
  showEditing(form, false);
  setSlider(null);
  setMoment(Date.now());
}

async function submit() {
  const data = values(form);
  let valid = requireFields(form, ["date", "time"]);
  if (slider.classList.contains("untouched")) {
    markField(form, "valence", message("chooseMood"));
    valid = false;
  }
  if (!valid) return showSummary(form, message("fixErrors"));
  const fields = { valence: Number(slider.value), recordedAt: fromZoned(data.date, data.time, zone) };
  if (data.note.trim()) fields.note = data.note.trim();
  const editing = state.moods.find((mood) => mood.id === state.editing);
  const result = await moods.save(editing, fields);
  if (!result.ok) return showProblem(form, result.data);
  stopEditing();
  await load();
  announce(outcomeText(result, "recordSaved"));
}

export async function run() {
  const me = await api("GET", "/me");
  if (!me.ok) return;
  zone = me.data.timeZone;
  form = document.querySelector('form[data-form="mood"]');
  slider = form.elements.valence;
  moods = recordCollection({ kind: "mood", path: "moods", label: (mood) => formatDateTime(mood.recordedAt) });
  state = { moods: [], editing: null };
  slider.addEventListener("input", () => setSlider(Number(slider.value)));

  onSubmit("mood", submit);
  form.querySelector('[data-action="cancel-edit"]').addEventListener("click", stopEditing);
  window.addEventListener("interlude:outbox", () => navigator.onLine && load());
  setSlider(null);
  setMoment(Date.now());
  await load();
}
