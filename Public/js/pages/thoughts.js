// The thoughts page (ACT): write a difficult thought down and rate it, look at it as words on a coloured screen
// while moving, resizing, turning and restyling it (touch, buttons or keys), rate it again; the same words again
// count as the same thought. The history lists thoughts with how often they came back, offline too.

import { apiList, api } from "../lib/api.js";
import { fromZoned, toZoned } from "../lib/calendar.js";
import { FONTS, PALETTE, applyTool, clamp, initialState, pinch, toolForKey, transform } from "../lib/defusion.js";
import { clearErrors, markField, onSubmit, requireFields, showProblem, showSummary, values } from "../lib/forms.js";
import { countMessage, formatDateTime, message } from "../lib/i18n.js";
import { enqueue, pending } from "../lib/outbox.js";
import { actionButton, announce, outcomeText, pendingBadge } from "../lib/records.js";
import { uuid } from "../lib/storage.js";

/** The words as the server compares them (it decides; this only groups what waits to be sent). */
const matchKey = (text) => text.normalize("NFKC").toLowerCase().normalize("NFKC").trim().split(/\s+/).join(" ");

/** A rating from -1 to 1 as the person reads it, -10 to +10. */
const tenths = (rating) => {
  const value = Math.round(rating * 10);
  return value > 0 ? `+${value}` : String(value).replace("-", "−");
};

/** What the page works on, set once by `run`. */
let zone;
let steps;
let form;
let afterForm;
let stage;
let words;
let state;
let status;
let pointers;
/** The gesture under way on the stage: a drag or a pinch, with where it started. */
let gesture = null;

// MARK: Ratings that start nowhere

function setSlider(slider, rating) {
  slider.classList.toggle("untouched", rating === null);
  slider.value = rating === null ? "0" : String(rating);
  slider.setAttribute("aria-valuetext", rating === null ? message("notChosen") : message("ratingText", { value: tenths(rating) }));
}

const chosen = (slider) => !slider.classList.contains("untouched");

function show(step) {
  for (const [name, section] of Object.entries(steps)) section.hidden = name !== step;
  steps[step].querySelector("h2").focus();
}

function reset() {
  form.reset();
  afterForm.reset();
  clearErrors(form);
  clearErrors(afterForm);
  setSlider(form.elements.ratingBefore, null);
  setSlider(afterForm.elements.ratingAfter, null);
  const now = toZoned(Date.now(), zone);
  form.elements.date.value = now.date;
  form.elements.time.value = now.time;
  state.draft = null;
}

const bounds = () => ({ x: stage.clientWidth / 2, y: stage.clientHeight / 2 });

function paint() {
  state.look = clamp(state.look, bounds());
  const { look } = state;
  const palette = PALETTE[look.palette];
  stage.style.background = palette.background;
  words.style.color = palette.inks[look.ink];
  words.style.fontFamily = FONTS[look.font];
  words.style.transform = transform(look);
  Object.assign(words.dataset, {
    x: look.x, y: look.y, scale: look.scale.toFixed(2), rotation: look.rotation, font: look.font, palette: look.palette, ink: look.ink,
  });
}

function saidAfter(tool) {
  if (["left", "right", "up", "down"].includes(tool)) return message("moved");
  if (tool === "bigger" || tool === "smaller") return message("sized", { percent: Math.round(state.look.scale * 100) });
  if (tool === "turnLeft" || tool === "turnRight") return message("turned", { degrees: state.look.rotation });
  return message("restyled");
}

function use(tool) {
  state.look = applyTool(state.look, tool);
  paint();
  status.textContent = saidAfter(tool);
}

/** Keeps a finger's moves coming when it leaves the stage; one a browser cannot capture still moves the words. */
function capture(id) {
  try {
    stage.setPointerCapture(id);
  } catch (error) {
    if (error.name !== "NotFoundError" && error.name !== "InvalidStateError") throw error;
  }
}

function point(event) {
  const box = stage.getBoundingClientRect();
  return { x: event.clientX - box.left - box.width / 2, y: event.clientY - box.top - box.height / 2 };
}

function release(event) {
  if (!pointers.has(event.pointerId)) return;
  const at = point(event);
  pointers.delete(event.pointerId);
  if (gesture?.kind === "drag" && !gesture.moved) {
    words.classList.add("gliding");
    state.look = { ...state.look, x: at.x, y: at.y };
  }
  if (pointers.size === 0) {
    paint();
    status.textContent = saidAfter(gesture?.kind === "pinch" ? "bigger" : "left");
    gesture = null;
  } else {
    const [remaining] = [...pointers.values()];
    gesture = { kind: "drag", start: { ...state.look }, from: remaining, moved: true };
  }
}

function startExercise() {
  words.textContent = state.draft.text;
  state.look = initialState();
  show("defusion");
  // On a small screen the stage lies below the instructions: bring it into view whole.
  stage.scrollIntoView({ block: "center" });
  paint();
}

// MARK: Recording

/** Where the phone is, if the person asked for it and the phone says within ten seconds. */
const position = () =>
  new Promise((resolve) => {
    if (!("geolocation" in navigator)) return resolve(null);
    navigator.geolocation.getCurrentPosition(
      ({ coords }) => resolve({ latitude: coords.latitude, longitude: coords.longitude, accuracy: Math.round(coords.accuracy) }),
      () => resolve(null),
      { timeout: 10000, maximumAge: 60000 },
    );
  });

async function submitThought() {
  const data = values(form);
  let valid = requireFields(form, ["text", "date", "time"]);
  if (!chosen(form.elements.ratingBefore)) {
    markField(form, "ratingBefore", message("chooseRating"));
    valid = false;
  }
  if (!valid) return showSummary(form, message("fixErrors"));
  state.draft = {
    text: data.text.trim(),
    ratingBefore: Number(form.elements.ratingBefore.value),
    recordedAt: fromZoned(data.date, data.time, zone),
  };
  if (data.note.trim()) state.draft.note = data.note.trim();
  if (form.elements.withLocation.checked) {
    const where = await position();
    if (where) state.draft.location = where;
    else announce(message("noPlace"));
  }
  startExercise();
}

async function submitAfter() {
  const slider = afterForm.elements.ratingAfter;
  if (!chosen(slider)) {
    markField(afterForm, "ratingAfter", message("chooseRating"));
    return showSummary(afterForm, message("fixErrors"));
  }
  const body = { id: uuid(), ...state.draft, ratingAfter: Number(slider.value) };
  const result = await save(body);
  if (!result.ok) {
    show("record");
    return showProblem(form, result.data);
  }
  reset();
  show("record");
  await load();
  announce(outcomeText(result, "thoughtSaved"));
}

/** Sends the occurrence, or keeps it in the outbox without a connection. */
async function save(body) {
  const result = await api("POST", "/me/thoughts/occurrences", body);
  if (result.status !== 0) return result;
  await enqueue({ id: uuid(), type: "record.create", recordKind: "thoughtOccurrence", recordId: body.id, record: body }, body.text);
  return { ok: true, queued: true };
}

// MARK: History

/** The server's thoughts with what waits in the outbox laid over them. */
async function overlay(thoughts) {
  if (!("indexedDB" in window)) return thoughts;
  const shown = thoughts.map((thought) => ({ ...thought, occurrences: [...(thought.occurrences || [])] }));
  for (const change of await pending()) {
    if (change.type === "record.delete" && change.recordKind === "thought") {
      const index = shown.findIndex((thought) => thought.id === change.recordId);
      if (index >= 0) shown.splice(index, 1);
    } else if (change.type === "record.create" && change.recordKind === "thoughtOccurrence") {
      const occurrence = { ...change.record, pending: true };
      const thought = shown.find((item) => matchKey(item.text) === matchKey(change.record.text));
      if (thought) thought.occurrences.unshift(occurrence);
      else shown.push({ id: change.record.id, text: change.record.text, origin: "patient", addedAt: change.record.recordedAt, occurrences: [occurrence], pending: true });
    }
  }
  return shown;
}

const lastActivity = (thought) => thought.occurrences.reduce((latest, item) => (item.recordedAt > latest ? item.recordedAt : latest), thought.addedAt);

async function load() {
  const result = await apiList("/me/thoughts");
  if (!result.ok) return;
  state.thoughts = (await overlay(result.data)).sort((a, b) => lastActivity(b).localeCompare(lastActivity(a)));
  for (const thought of state.thoughts) thought.occurrences.sort((a, b) => b.recordedAt.localeCompare(a.recordedAt));
  render();
}

function render() {
  document.getElementById("thoughts-list").replaceChildren(...state.thoughts.map(item));
  document.getElementById("thoughts-empty").hidden = state.thoughts.length > 0;
}

function paragraph(text, className) {
  const node = document.createElement("p");
  if (className) node.className = className;
  node.textContent = text;
  return node;
}

function item(thought) {
  const entry = document.createElement("li");
  entry.className = "appointment card";
  entry.dataset.id = thought.id;
  const title = document.createElement("h3");
  title.textContent = thought.text;
  if (thought.origin === "therapist") {
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.textContent = message("fromTherapist");
    title.append(" ", badge);
  }
  if (thought.pending || thought.occurrences.some((occurrence) => occurrence.pending)) title.append(" ", pendingBadge());
  entry.append(title);
  const [latest] = thought.occurrences;
  if (latest) {
    entry.append(
      paragraph(countMessage("cameBack", thought.occurrences.length, { date: formatDateTime(latest.recordedAt) }), "when"),
      paragraph(message("ratingPair", { before: tenths(latest.ratingBefore), after: tenths(latest.ratingAfter) })),
      occurrences(thought),
    );
  } else {
    entry.append(paragraph(message("notRecordedYet"), "when"));
  }
  const actions = document.createElement("div");
  actions.className = "actions";
  actions.append(actionButton("again", message("recordAgain"), () => recordAgain(thought)));
  if (!thought.pending) actions.append(actionButton("delete", message("delete"), () => remove(thought), true));
  entry.append(actions);
  return entry;
}

function occurrences(thought) {
  const details = document.createElement("details");
  const summary = document.createElement("summary");
  summary.textContent = message("eachTime", { count: thought.occurrences.length });
  const list = document.createElement("ul");
  for (const occurrence of thought.occurrences) {
    const row = document.createElement("li");
    row.append(paragraph(formatDateTime(occurrence.recordedAt), "when"));
    row.append(paragraph(message("ratingPair", { before: tenths(occurrence.ratingBefore), after: tenths(occurrence.ratingAfter) })));
    if (occurrence.location) {
      row.append(paragraph(message("place", { latitude: occurrence.location.latitude.toFixed(4), longitude: occurrence.location.longitude.toFixed(4) }), "hint"));
    }
    if (occurrence.note) row.append(paragraph(occurrence.note, "hint"));
    list.append(row);
  }
  details.append(summary, list);
  return details;
}

function recordAgain(thought) {
  reset();
  form.elements.text.value = thought.text;
  show("record");
  form.elements.ratingBefore.focus();
}

async function remove(thought) {
  if (!confirm(message("confirmDelete"))) return;
  let result = await api("DELETE", `/me/thoughts/${thought.id}?baseVersion=${thought.version}`);
  if (result.status === 0) {
    await enqueue({ id: uuid(), type: "record.delete", recordKind: "thought", recordId: thought.id, baseVersion: thought.version }, thought.text);
    result = { ok: true, queued: true };
  }
  if (!result.ok) return announce(result.data?.detail || message("network"));
  await load();
  announce(outcomeText(result, "recordDeleted"));
}

export async function run() {
  const me = await api("GET", "/me");
  if (!me.ok) return;
  zone = me.data.timeZone;
  steps = {
    record: document.getElementById("record-step"),
    defusion: document.getElementById("defusion-step"),
    after: document.getElementById("after-step"),
  };
  form = document.querySelector('form[data-form="thought"]');
  afterForm = document.querySelector('form[data-form="thought-after"]');
  stage = document.getElementById("defusion-stage");
  words = document.getElementById("defusion-thought");
  state = { thoughts: [], draft: null, look: initialState() };

  for (const slider of [form.elements.ratingBefore, afterForm.elements.ratingAfter]) {
    slider.addEventListener("input", () => setSlider(slider, Number(slider.value)));
  }
  status = document.getElementById("defusion-status");
  document.querySelectorAll("[data-tool]").forEach((button) => button.addEventListener("click", () => use(button.dataset.tool)));
  words.addEventListener("keydown", (event) => {
    const tool = toolForKey(event.key);
    if (!tool) return;
    event.preventDefault();
    use(tool);
  });

  // Pointer events: a tap sends the words there, one finger drags them, two resize and turn them.
  pointers = new Map();
  gesture = null;
  stage.addEventListener("pointerdown", (event) => {
    pointers.set(event.pointerId, point(event));
    capture(event.pointerId);
    const [first, second] = [...pointers.values()];
    gesture = second
      ? { kind: "pinch", start: { ...state.look }, from: [first, second] }
      : { kind: "drag", start: { ...state.look }, from: first, moved: false };
  });
  stage.addEventListener("pointermove", (event) => {
    if (!pointers.has(event.pointerId) || !gesture) return;
    pointers.set(event.pointerId, point(event));
    const now = [...pointers.values()];
    if (gesture.kind === "pinch" && now.length >= 2) {
      state.look = pinch(gesture.start, gesture.from, now.slice(0, 2));
    } else if (gesture.kind === "drag") {
      const dx = now[0].x - gesture.from.x;
      const dy = now[0].y - gesture.from.y;
      gesture.moved ||= Math.hypot(dx, dy) > 8;
      if (gesture.moved) state.look = { ...gesture.start, x: gesture.start.x + dx, y: gesture.start.y + dy };
    }
    paint();
  });
  stage.addEventListener("pointerup", release);
  stage.addEventListener("pointercancel", release);
  words.addEventListener("transitionend", () => words.classList.remove("gliding"));

  onSubmit("thought", submitThought);
  document.querySelector('[data-action="done"]').addEventListener("click", () => {
    document.getElementById("after-text").textContent = state.draft.text;
    show("after");
  });
  document.querySelector('[data-action="back"]').addEventListener("click", startExercise);

  onSubmit("thought-after", submitAfter);
  window.addEventListener("interlude:outbox", () => navigator.onLine && load());
  reset();
  await load();
}
