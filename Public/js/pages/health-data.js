// The health data page: each kind of measurement the person's studies ask for, why, how many are on the server,
// and a switch (switching off deletes them there); a chart of daily values beside their mood; and the import of an
// Apple Health export or a CSV file, uploaded in parts so a broken upload resumes where the server stopped.

import { api, apiText, apiUpload } from "../lib/api.js";
import { markField, onSubmit, showSummary } from "../lib/forms.js";
import { message, showInLanguage } from "../lib/i18n.js";
import { chartWidth } from "../lib/page.js";
import { announce } from "../lib/records.js";

const PART = 4 * 1024 * 1024;

/** What the page works on, set once by `run`. */
let state;
let form;
let resume;
let bar;
let phase;
let outcome;

const typeName = (type) => message(`type-${type}`);

async function load() {
  const result = await api("GET", "/me/sample-types");
  if (!result.ok) return;
  state.types = result.data;
  render();
}

function render() {
  const list = document.getElementById("sample-types");
  list.replaceChildren(...state.types.map(item));
  document.getElementById("types-empty").hidden = state.types.length > 0;
  const enabled = state.types.filter((type) => type.count > 0);
  const select = document.getElementById("chart-type");
  const chosen = select.value;
  select.replaceChildren(...enabled.map((type) => new Option(typeName(type.type), type.type)));
  if (enabled.some((type) => type.type === chosen)) select.value = chosen;
  document.getElementById("chart-section").hidden = enabled.length === 0;
  if (enabled.length) drawChart();
}

function item(type) {
  const entry = document.createElement("li");
  entry.className = "appointment card";
  entry.dataset.type = type.type;
  const title = document.createElement("h3");
  // The unit in words ("steps", "beats per minute"), not the UCUM code the data keeps.
  title.textContent = `${typeName(type.type)} (${message(`unit-${type.type}`)})`;
  entry.append(title);
  type.purposes.forEach((purpose, index) => {
    const why = document.createElement("p");
    showInLanguage(why, type.purposeTexts?.[index], purpose);
    entry.append(why);
  });
  const facts = document.createElement("p");
  facts.className = "hint";
  facts.textContent = message("count", { count: type.count });
  if (type.windowDays !== undefined) facts.textContent += " " + message("window", { days: type.windowDays });
  entry.append(facts);
  if (type.purposes.length || type.enabled) {
    const id = `enable-${type.type}`;
    const field = document.createElement("div");
    field.className = "choice";
    const box = document.createElement("input");
    box.type = "checkbox";
    box.id = id;
    box.checked = type.enabled;
    box.addEventListener("change", () => toggle(type, box));
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = message("enabled");
    field.append(box, label);
    entry.append(field);
  }
  return entry;
}

async function toggle(type, box) {
  if (!box.checked && !confirm(message("confirmDisable", { count: type.count, type: typeName(type.type) }))) {
    box.checked = true;
    return;
  }
  const result = await api("PUT", `/me/sample-types/${type.type}`, { enabled: box.checked });
  if (!result.ok) {
    box.checked = !box.checked;
    return announce(result.data?.detail || message("network"));
  }
  await load();
  announce(message(box.checked ? "enabledDone" : "disabled", { type: typeName(type.type) }));
}

async function drawChart() {
  const type = document.getElementById("chart-type").value;
  const days = document.getElementById("chart-days").value;
  const container = document.getElementById("sample-chart");
  const width = chartWidth(container);
  const chart = await apiText(`/me/samples/daily.svg?type=${encodeURIComponent(type)}&days=${days}&width=${width}`);
  if (!chart.ok) return container.replaceChildren();
  const svg = new DOMParser().parseFromString(chart.text, "image/svg+xml").documentElement;
  container.replaceChildren(document.importNode(svg, true));
}

const contentType = (file) =>
  file.name.endsWith(".zip") ? "application/zip" : file.name.endsWith(".csv") ? "text/csv" : "application/xml";

function show(text, share) {
  document.getElementById("import-progress").hidden = false;
  phase.textContent = text;
  bar.value = share;
}

/** Sends the file from where the server stopped; on a broken connection offers to resume. */
async function upload() {
  const { file } = state.upload;
  resume.hidden = true;
  while (!state.upload.id || state.upload.received < file.size) {
    const from = state.upload.received;
    const part = file.slice(from, from + PART);
    show(message("uploading"), from / file.size);
    const result = state.upload.id
      ? await apiUpload("PATCH", `/me/health-imports/${state.upload.id}`, part, {
          "Content-Type": "application/octet-stream",
          "Upload-Offset": String(from),
        })
      : await apiUpload("POST", "/me/health-imports", part, { "Content-Type": contentType(file), "Upload-Length": String(file.size) });
    if (!result.ok) {
      if (state.upload.id) {
        const known = await api("GET", `/me/health-imports/${state.upload.id}`);
        if (known.ok) state.upload.received = known.data.received;
      }
      outcome.textContent = result.status === 0 ? message("uploadBroke") : result.data?.detail || message("importFailed");
      resume.hidden = result.status !== 0 && result.status !== 409;
      return;
    }
    state.upload.id = result.data.id;
    state.upload.received = result.data.received;
  }
  await follow();
}

/** Shows how far the server has read the file until it is done. */
async function follow() {
  for (;;) {
    const result = await api("GET", `/me/health-imports/${state.upload.id}`);
    if (!result.ok) return;
    const progress = result.data;
    if (progress.status === "done" || progress.status === "failed") {
      bar.value = 1;
      phase.textContent = "";
      const skipped = progress.skipped;
      outcome.textContent =
        progress.status === "done"
          ? message("importDone", {
              stored: progress.stored, duplicates: progress.duplicates, notEnabled: skipped.notEnabled,
              outsideWindow: skipped.outsideWindow, invalid: skipped.invalid,
            })
          : message("importFailed");
      state.upload = null;
      return load();
    }
    show(message("reading"), progress.progress ?? 0);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

async function submit() {
  const file = form.elements.file.files[0];
  if (!file) {
    markField(form, "file", message("chooseFile"));
    return showSummary(form, message("fixErrors"));
  }
  state.upload = { file, id: null, received: 0 };
  outcome.textContent = "";
  await upload();
}

export async function run() {
  state = { types: [], upload: null };
  document.getElementById("chart-type").addEventListener("change", drawChart);
  document.getElementById("chart-days").addEventListener("change", drawChart);

  form = document.querySelector('form[data-form="health-import"]');
  resume = form.querySelector('[data-action="resume"]');
  bar = document.getElementById("import-bar");
  phase = document.getElementById("import-phase");
  outcome = document.getElementById("import-result");

  onSubmit("health-import", submit);
  resume.addEventListener("click", () => state.upload && upload());

  await load();
}
