// The audiograms page: the measurements, one shown as the chart the server draws with its data table (one ear or
// both, compared with another date, printable), and the entry form: a grid per ear and conduction, a row per
// frequency with buttons a thumb reaches for the 5 dB steps, "no response" and "masked".

import { api, apiText } from "../lib/api.js";
import { fromZoned, toZoned } from "../lib/calendar.js";
import { markField, onSubmit, requireFields, showProblem, showEditing, showSummary, values } from "../lib/forms.js";
import { locale, message } from "../lib/i18n.js";
import { chartWidth } from "../lib/page.js";
import { actionButton, announce, outcomeText, pendingBadge, recordCollection, removeAfterConfirming } from "../lib/records.js";

const STANDARD = [125, 250, 500, 1000, 2000, 4000, 8000];
const EARS = ["right", "left"];
const CONDUCTIONS = ["air", "bone"];
const LOWEST = -10;
const LOUDEST = 120;
const STEP = 5;

const earKey = (ear) => (ear === "right" ? "earRight" : "earLeft");

/** What the page works on, set once by `run`. */
let zone;
let form;
let grids;
let audiograms;
const state = { audiograms: [], shown: null, editing: null, frequencies: [...STANDARD], ear: "right", conduction: "air" };

const dateText = (instant) =>
  new Intl.DateTimeFormat(locale(), { dateStyle: "long", timeZone: zone }).format(new Date(instant));

// The entry grid

const cellID = (ear, conduction, frequency) => `threshold-${ear}-${conduction}-${frequency}`;

/** A button that moves the row's level one step quieter or louder. */
function stepButton(line, input, frequency, change, text) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "secondary";
  button.textContent = change < 0 ? "−" : "+";
  button.setAttribute("aria-label", `${text}, ${frequency} Hz`);
  button.dataset.step = String(change);
  button.addEventListener("click", () => {
    const current = input.value === "" ? 0 - change : Number(input.value);
    input.value = String(Math.min(LOUDEST, Math.max(LOWEST, Math.round(current / STEP) * STEP + change)));
    line.querySelector('[data-role="no-response"]').checked = false;
  });
  return button;
}

/** A cell with a checkbox for "no response" or "masked" at one frequency. */
function toggleCell(role, text, frequency) {
  const cell = document.createElement("td");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.dataset.role = role;
  box.setAttribute("aria-label", `${text}, ${frequency} Hz`);
  cell.append(box);
  return cell;
}

function row(ear, conduction, frequency) {
  const line = document.createElement("tr");
  line.dataset.frequency = String(frequency);
  const head = document.createElement("th");
  head.scope = "row";
  const label = document.createElement("label");
  label.htmlFor = cellID(ear, conduction, frequency);
  const unit = document.createElement("span");
  unit.className = "visually-hidden";
  unit.textContent = " Hz";
  label.append(String(frequency), unit);
  head.append(label);
  const level = document.createElement("td");
  level.className = "stepper";
  const input = document.createElement("input");
  Object.assign(input, { type: "number", id: cellID(ear, conduction, frequency), min: LOWEST, max: LOUDEST, step: STEP });
  input.inputMode = "numeric";
  input.dataset.role = "threshold";
  level.append(
    stepButton(line, input, frequency, -STEP, message("quieter")), input, stepButton(line, input, frequency, STEP, message("louder")),
  );
  const error = document.createElement("span");
  error.className = "error";
  error.hidden = true;
  level.append(error);
  line.append(
    head, level, toggleCell("no-response", message("noResponse"), frequency), toggleCell("masked", message("masked"), frequency),
  );
  return line;
}


function drawGrids() {
  grids.replaceChildren();
  for (const ear of EARS) {
    for (const conduction of CONDUCTIONS) {
      const table = document.createElement("table");
      table.className = `threshold-grid ${ear}`;
      table.dataset.ear = ear;
      table.dataset.conduction = conduction;
      table.hidden = ear !== state.ear || conduction !== state.conduction;
      const caption = document.createElement("caption");
      caption.textContent = `${message(earKey(ear))} · ${message(conduction)}`;
      const head = document.createElement("thead");
      head.innerHTML = "<tr><th scope=col></th><th scope=col></th><th scope=col></th><th scope=col></th></tr>";
      const names = ["Hz", message("threshold"), message("noResponse"), message("masked")];
      head.querySelectorAll("th").forEach((cell, index) => (cell.textContent = names[index]));
      const body = document.createElement("tbody");
      for (const frequency of state.frequencies) body.append(row(ear, conduction, frequency));
      table.append(caption, head, body);
      grids.append(table);
    }
  }
}


function choose(attribute, value) {
  state[attribute] = value;
  form.querySelectorAll(`[data-${attribute}]`).forEach((button) =>
    button.setAttribute("aria-pressed", String(button.dataset[attribute] === value)),
  );
  grids.querySelectorAll("table").forEach((table) => {
    table.hidden = table.dataset.ear !== state.ear || table.dataset.conduction !== state.conduction;
  });
}


/** The filled rows as the API takes them, each with the row it came from to show a problem beside. */
function enteredPoints() {
  const points = [];
  for (const table of grids.querySelectorAll("table")) {
    for (const line of table.querySelectorAll("tbody tr")) {
      const value = line.querySelector('[data-role="threshold"]').value;
      const noResponse = line.querySelector('[data-role="no-response"]').checked;
      if (value === "" && !noResponse) continue;
      const point = {
        ear: table.dataset.ear,
        frequencyHz: Number(line.dataset.frequency),
        thresholdDbHL: noResponse ? null : Number(value),
        conduction: table.dataset.conduction,
        masked: line.querySelector('[data-role="masked"]').checked,
      };
      points.push({ point, line, table });
    }
  }
  return points;
}


function markRow({ line, table }, text) {
  choose("ear", table.dataset.ear);
  choose("conduction", table.dataset.conduction);
  const error = line.querySelector(".error");
  error.textContent = text;
  error.hidden = false;
  line.querySelector('[data-role="threshold"]').setAttribute("aria-invalid", "true");
}


/** Draws the grids for the standard frequencies, `extra` ones and those of `points`, filled with `points`. */
function setGrids(points, extra = []) {
  state.frequencies = [...new Set([...STANDARD, ...extra, ...points.map((point) => point.frequencyHz)])].sort((a, b) => a - b);
  drawGrids();
  for (const point of points) {
    const input = document.getElementById(cellID(point.ear, point.conduction, point.frequencyHz));
    const line = input.closest("tr");
    if (point.thresholdDbHL === undefined || point.thresholdDbHL === null) {
      line.querySelector('[data-role="no-response"]').checked = true;
    } else {
      input.value = String(point.thresholdDbHL);
    }
    line.querySelector('[data-role="masked"]').checked = point.masked;
  }
}


// The list and the chart

const oneDecimal = new Intl.NumberFormat(locale(), {
  minimumFractionDigits: 1,
  maximumFractionDigits: 1,
});
const averageText = (audiogram) =>
  EARS.map((ear) => {
    const average = audiogram[`${ear}Average`];
    return average === undefined || average === null
      ? message("noAverage", { ear: message(earKey(ear)) })
      : message("average", { ear: message(earKey(ear)), value: oneDecimal.format(average) });
  }).join(" · ");


async function load() {
  const loaded = await audiograms.load();
  if (!loaded) return;
  state.audiograms = loaded.sort((a, b) => b.measuredAt.localeCompare(a.measuredAt));
  renderList();
  if (!state.audiograms.some((audiogram) => audiogram.id === state.shown)) state.shown = state.audiograms[0]?.id || null;
  await renderView();
}


function renderList() {
  const list = document.getElementById("audiograms-list");
  list.replaceChildren();
  document.getElementById("audiograms-empty").hidden = state.audiograms.length > 0;
  for (const audiogram of state.audiograms) {
    const item = document.createElement("li");
    item.className = "appointment card";
    item.dataset.id = audiogram.id;
    const title = document.createElement("h3");
    title.textContent = dateText(audiogram.measuredAt);
    if (audiogram.pending) title.append(" ", pendingBadge());
    const summary = document.createElement("p");
    summary.className = "when";
    summary.textContent = audiogram.pending ? "" : averageText(audiogram);
    const actions = document.createElement("div");
    actions.className = "actions";
    actions.append(
      actionButton("show", message("show"), async () => {
        state.shown = audiogram.id;
        await renderView();
        document.getElementById("audiogram-view").scrollIntoView();
      }),
      actionButton("edit", message("edit"), () => startEditing(audiogram)),
      actionButton("delete", message("delete"), () => remove(audiogram), true),
    );
    item.append(title, summary, actions);
    list.append(item);
  }
}


function table(audiogram, ears) {
  const points = audiogram.points;
  const columns = [];
  for (const conduction of CONDUCTIONS) {
    for (const ear of ears) {
      if (points.some((point) => point.ear === ear && point.conduction === conduction)) columns.push({ ear, conduction });
    }
  }
  const frequencies = [...new Set(points.map((point) => point.frequencyHz))].sort((a, b) => a - b);
  const element = document.createElement("table");
  element.className = "data-table";
  const caption = document.createElement("caption");
  caption.textContent = message("tableCaption", { date: dateText(audiogram.measuredAt) });
  const headRow = document.createElement("tr");
  for (const text of [message("frequency"), ...columns.map((column) => `${message(earKey(column.ear))}, ${message(column.conduction)}`)]) {
    const cell = document.createElement("th");
    cell.scope = "col";
    cell.textContent = text;
    headRow.append(cell);
  }
  const head = document.createElement("thead");
  head.append(headRow);
  const body = document.createElement("tbody");
  for (const frequency of frequencies) {
    const line = document.createElement("tr");
    const label = document.createElement("th");
    label.scope = "row";
    label.textContent = `${frequency} Hz`;
    line.append(label);
    for (const column of columns) {
      const point = points.find(
        (item) => item.ear === column.ear && item.conduction === column.conduction && item.frequencyHz === frequency,
      );
      const cell = document.createElement("td");
      if (point) {
        cell.textContent = point.thresholdDbHL === undefined || point.thresholdDbHL === null
          ? message("noResponse")
          : String(point.thresholdDbHL);
        if (point.masked) cell.textContent += ` (${message("masked")})`;
      }
      line.append(cell);
    }
    body.append(line);
  }
  element.append(caption, head, body);
  return element;
}


async function renderView() {
  const view = document.getElementById("audiogram-view");
  const audiogram = state.audiograms.find((item) => item.id === state.shown);
  view.hidden = !audiogram;
  if (!audiogram) return;
  document.getElementById("view-heading").textContent = dateText(audiogram.measuredAt);
  const compare = document.getElementById("view-compare");
  const chosen = compare.value;
  compare.replaceChildren(compare.options[0]);
  for (const other of state.audiograms) {
    if (other.id !== audiogram.id && !other.pending) compare.append(new Option(dateText(other.measuredAt), other.id));
  }
  compare.value = [...compare.options].some((option) => option.value === chosen) ? chosen : "";
  const ears = document.getElementById("view-ears").value;
  const shownEars = ears === "both" ? EARS : [ears];
  const earlier = state.audiograms.find((item) => item.id === compare.value);
  document.getElementById("audiogram-tables").replaceChildren(
    ...[audiogram, earlier].filter(Boolean).map((item) => table(item, shownEars)),
  );
  const figure = document.getElementById("audiogram-chart");
  const waiting = document.getElementById("chart-waiting");
  waiting.hidden = !audiogram.pending;
  if (audiogram.pending) return figure.replaceChildren();
  const query = new URLSearchParams({ ears, width: String(chartWidth(figure)) });
  if (compare.value) query.set("compare", compare.value);
  const chart = await apiText(`/me/audiograms/${audiogram.id}/chart.svg?${query}`);
  if (!chart.ok) {
    waiting.hidden = false;
    return figure.replaceChildren();
  }
  const drawing = new DOMParser().parseFromString(chart.text, "image/svg+xml").documentElement;
  figure.replaceChildren(document.importNode(drawing, true));
}


function remove(audiogram) {
  return
  removeAfterConfirming(audiograms, audiogram, async () => {
    if (state.editing === audiogram.id) stopEditing();
    await load();
  });
}

// The form

function startEditing(audiogram) {
  state.editing = audiogram.id;
  const at = toZoned(audiogram.measuredAt, zone);
  form.elements.date.value = at.date;
  form.elements.time.value = at.time;
  setGrids(audiogram.points);
  choose("ear", "right");
  choose("conduction", "air");
  showEditing(form, true);
  form.elements.date.focus();
}


function stopEditing() {
  state.editing = null;
  showEditing(form, false);
  setGrids([]);
}


/** The checks the server makes too: a date and time, at least one point, levels from −10 to 120 in 5 dB steps. */
function check(entered) {
  let valid = requireFields(form, ["date", "time"]);
  if (!entered.length) {
    markField(form, "points", message("noPoints"));
    valid = false;
  }
  for (const item of entered) {
    const level = item.point.thresholdDbHL;
    if (level !== null && (!Number.isInteger(level) || level < LOWEST || level > LOUDEST || level % STEP !== 0)) {
      markRow(item, message("badThreshold"));
      valid = false;
    }
  }
  return valid;
}


/** Checks the form, saves the audiogram (new or edited) and shows the list again; problems go beside their rows. */
async function submit() {
  grids.querySelectorAll(".error").forEach((cell) => (cell.hidden = true));
  const data = values(form);
  const entered = enteredPoints();
  if (!check(entered)) return showSummary(form, message("fixErrors"));
  const fields = { measuredAt: fromZoned(data.date, data.time, zone), points: entered.map((item) => item.point) };
  const editing = state.audiograms.find((audiogram) => audiogram.id === state.editing);
  const result = await audiograms.save(editing, fields);
  if (!result.ok) {
    for (const error of result.data?.errors || []) {
      const index = /^points\.(\d+)\./.exec(error.field || "");
      if (index && entered[Number(index[1])]) markRow(entered[Number(index[1])], error.detail);
    }
    return showProblem(form, result.data);
  }
  state.shown = editing ? editing.id : result.data?.id || state.shown;
  stopEditing();
  await load();
  announce(outcomeText(result, "recordSaved"));
}

/** Adds a row for the frequency typed in to every grid, keeping what is entered. */
function addFrequency() {
  const input = document.getElementById("custom-frequency");
  const frequency = Number(input.value);
  const slot = form.querySelector('[data-for="customFrequency"]');
  slot.hidden = true;
  if (!Number.isInteger(frequency) || frequency < 125 || frequency > 20000) {
    slot.textContent = message("badFrequency");
    slot.hidden = false;
    return;
  }
  if (!state.frequencies.includes(frequency)) {
    setGrids(enteredPoints().map((item) => item.point), [...state.frequencies, frequency]);
  }
  input.value = "";
  document.getElementById(cellID(state.ear, state.conduction, frequency)).focus();
}

export async function run() {
  const me = await api("GET", "/me");
  if (!me.ok) return;
  zone = me.data.timeZone;
  form = document.querySelector('form[data-form="audiogram"]');
  grids = document.getElementById("audiogram-grids");
  audiograms = recordCollection({
    kind: "audiogram",
    path: "audiograms",
    label: (audiogram) => message("measuredOn", { date: dateText(audiogram.measuredAt) }),
  });
  onSubmit("audiogram", submit);
  form.querySelectorAll("[data-ear]").forEach((button) => button.addEventListener("click", () => choose("ear", button.dataset.ear)));
  form
    .querySelectorAll("[data-conduction]")
    .forEach((button) => button.addEventListener("click", () => choose("conduction", button.dataset.conduction)));
  form.querySelector('[data-action="add-frequency"]').addEventListener("click", addFrequency);
  form.querySelector('[data-action="cancel-edit"]').addEventListener("click", stopEditing);
  document.getElementById("view-ears").addEventListener("change", renderView);
  document.getElementById("view-compare").addEventListener("change", renderView);
  document.querySelector('[data-action="print"]').addEventListener("click", () => window.print());
  window.addEventListener("interlude:outbox", () => navigator.onLine && load());
  setGrids([]);
  await load();
}
