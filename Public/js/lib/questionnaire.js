// Fills in one questionnaire: renders it from its definition, shows and hides sections as answers require,
// keeps every answer on the device at once, and submits only when complete and confirmed.
import { isAnswered, localized, missingRequired, optionsOf, progress, scores, visibility } from "./instrument-logic.js";
import { element } from "./dom.js";
import { message } from "./i18n.js";
import { forgetDraft, loadDraft, saveDraft } from "./storage.js";

/** Renders and runs the questionnaire for `prompt` inside the page. */
export function runQuestionnaire({ prompt, definition, language, submit, readOnlyAnswers, onDone, onAnswer }) {
  const draft = readOnlyAnswers ? { answers: readOnlyAnswers, responseId: null } : loadDraft(prompt.id);
  const q = {
    prompt, definition, language, submit, onDone, onAnswer, draft,
    answers: draft.answers,
    readOnly: Boolean(readOnlyAnswers),
    form: document.getElementById("questionnaire"),
    itemNodes: new Map(),
    sectionNodes: new Map(),
    progressBar: document.getElementById("progress"),
    progressText: document.getElementById("progress-text"),
    submitButton: document.getElementById("submit"),
    confirmPanel: document.getElementById("confirm"),
    // When the person last answered anything, or the questionnaire was shown: the start of the next item's time.
    lastAnswerAt: Date.now(),
  };
  renderSections(q);
  document.getElementById("progress-line").hidden = false;
  q.form.hidden = false;
  if (q.readOnly) {
    q.form.querySelectorAll("input, textarea, select, button.clear").forEach((input) => (input.disabled = true));
    document.querySelector(".sticky-actions").hidden = true;
  }
  update(q);

  document.getElementById("next-unanswered").addEventListener("click", () => showNextUnanswered(q));
  q.form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (q.readOnly) return;
    if (missingRequired(definition, q.answers).length) {
      document.getElementById("next-unanswered").click();
      return;
    }
    q.confirmPanel.hidden = false;
    q.confirmPanel.focus();
  });
  document.getElementById("confirm-no").addEventListener("click", () => {
    q.confirmPanel.hidden = true;
    q.submitButton.focus();
  });
  document.getElementById("confirm-yes").addEventListener("click", () => send(q));
  return { showStatus, answers: q.answers };
}

/** Keeps the answers and how far they go on the device (never those only shown). */
function store(q) {
  if (q.readOnly) return;
  q.draft.progress = progress(q.definition, q.answers);
  saveDraft(q.prompt.id, q.draft);
}

/** The longest time the server accepts for one item: a day, in milliseconds. */
const LONGEST_ITEM_TIME = 86_400_000;

/**
 * Adds the time since the last answer (or since the questionnaire was shown) to the item's: paradata the server works
 * out response-quality indices from.
 */
function countTime(q, id) {
  const now = Date.now();
  const times = (q.draft.itemTimes ||= {});
  times[id] = Math.min((times[id] || 0) + Math.max(0, now - q.lastAnswerAt), LONGEST_ITEM_TIME);
  q.lastAnswerAt = now;
}

/** Takes an answer (an empty one removes it), keeps it and shows what follows from it. */
function setAnswer(q, id, value) {
  countTime(q, id);
  if (value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0)) {
    delete q.answers[id];
  } else {
    q.answers[id] = value;
    if (!q.draft.startedAt) q.draft.startedAt = new Date().toISOString();
  }
  store(q);
  update(q);
  q.onAnswer?.(q.answers);
}

/** Every section with its items, into the page. */
function renderSections(q) {
  const { definition, language } = q;
  const container = document.getElementById("sections");
  for (const section of definition.sections) {
    const node = element("section", { className: "card question-section", "data-section": section.id });
    if (section.title) node.append(element("h2", {}, [localized(section.title, language)]));
    if (section.description) node.append(element("p", {}, [localized(section.description, language)]));
    for (const item of section.items) {
      const itemNode = renderItem(item, definition, language, message, q.answers, (id, value) => setAnswer(q, id, value), q.readOnly);
      q.itemNodes.set(item.id, itemNode);
      node.append(itemNode);
    }
    q.sectionNodes.set(section.id, node);
    container.append(node);
  }
}

/** Shows the sections and items the answers call for, how far the person is, and whether they may send. */
function update(q) {
  const { definition, answers } = q;
  const visible = visibility(definition, answers);
  for (const [id, node] of q.sectionNodes) node.hidden = !visible.sections.has(id);
  for (const [id, node] of q.itemNodes) node.hidden = !visible.items.has(id);
  const { answered, total } = progress(definition, answers);
  q.progressBar.max = Math.max(total, 1);
  q.progressBar.value = answered;
  q.progressText.textContent = message("progress", { answered, total });
  const missing = missingRequired(definition, answers);
  q.submitButton.disabled = q.readOnly || missing.length > 0;
  q.submitButton.setAttribute("aria-describedby", "progress-text");
  document.getElementById("next-unanswered").hidden = q.readOnly || answered === total;
}

/** Brings the first required item without an answer (or else the first unanswered one) into view. */
function showNextUnanswered(q) {
  const { definition, answers } = q;
  const visible = visibility(definition, answers).items;
  const missing = missingRequired(definition, answers);
  const target =
    missing[0] ||
    definition.sections
      .flatMap((section) => section.items)
      .find((item) => item.type !== "display" && visible.has(item.id) && !isAnswered(answers[item.id]))?.id;
  if (!target) return;
  const node = q.itemNodes.get(target);
  node.scrollIntoView({ behavior: "smooth", block: "center" });
  node.querySelector("input, textarea, select")?.focus();
}

/** Sends the answers the person can see, once confirmed; what the server refuses is shown beside its item. */
async function send(q) {
  const { prompt, definition, draft } = q;
  q.confirmPanel.hidden = true;
  const visible = visibility(definition, q.answers).items;
  const sent = Object.fromEntries(Object.entries(q.answers).filter(([id]) => visible.has(id)));
  const times = Object.entries(draft.itemTimes || {}).filter(([id]) => id in sent);
  const result = await q.submit({
    id: draft.responseId,
    promptId: prompt.id,
    instrumentKey: definition.key,
    version: definition.version,
    answers: sent,
    startedAt: draft.startedAt || undefined,
    completedAt: draft.completedAt || (draft.completedAt = new Date().toISOString()),
    itemTimesMs: times.length ? Object.fromEntries(times.map(([id, ms]) => [id, Math.round(ms)])) : undefined,
  });
  // Answers waiting in the outbox stay on the device, read-only, until they are sent.
  if (result.ok && result.data.queued) draft.queued = true;
  store(q);
  if (result.ok) {
    if (!draft.queued) forgetDraft(prompt.id);
    q.onDone(result.data);
    return;
  }
  if (result.status === 0) {
    showStatus(message("savedLocally"), "warn");
    return;
  }
  showErrors(q, result.data);
}

function showErrors(q, problem) {
  const summary = q.form.querySelector("[data-summary]");
  const errors = (problem && problem.errors) || [];
  for (const error of errors) {
    const id = String(error.field || "").replace(/^answers\./, "");
    const slot = q.itemNodes.get(id)?.querySelector(".error");
    if (slot) {
      slot.textContent = error.detail;
      slot.hidden = false;
    }
  }
  summary.textContent = (problem && problem.detail) || "";
  summary.hidden = false;
  summary.focus();
  if (errors.some((error) => error.field === "completedAt")) delete q.draft.completedAt;
}

function showStatus(text, kind) {
  const status = document.getElementById("questionnaire-status");
  status.className = `notice ${kind}`;
  status.textContent = text;
  status.hidden = false;
}

/** A fieldset of radio buttons or checkboxes, one per choice, labelled by the item's text. */
function choiceGroup(field, type, choices, isChecked, onChange) {
  const { id, text, help, describedBy, requiredMark } = field;
  const fieldset = element("fieldset", { className: "choices", "aria-describedby": describedBy });
  fieldset.append(element("legend", {}, [text + requiredMark]));
  if (help) fieldset.append(help);
  choices.forEach((choice, index) => {
    const inputID = `${id}-${index}`;
    const row = element("div", { className: "choice" });
    const input = element("input", { type, id: inputID, name: id, value: choice.value });
    input.checked = isChecked(choice.value);
    input.addEventListener("change", () => onChange(choice.value, input.checked));
    row.append(input, element("label", { htmlFor: inputID }, [choice.label]));
    fieldset.append(row);
  });
  return fieldset;
}

/** The field for an answer in one's own words to a choice that takes one (FHIR's open-choice): in place of the
 * single choice's option, or beside the multiple choice's. */
function otherAnswer(field, group, codes) {
  const { item, message, answers, setAnswer, id, readOnly } = field;
  const given = answers[item.id];
  const current = Array.isArray(given) ? given.find((value) => !codes.has(value)) : given !== undefined && !codes.has(String(given)) ? given : "";
  const input = element("input", { type: "text", id: `${id}-other`, maxLength: 200, disabled: Boolean(readOnly) });
  input.value = current || "";
  input.addEventListener("input", () => {
    const text = input.value.trim();
    if (item.type === "multiple") {
      const chosen = (Array.isArray(answers[item.id]) ? answers[item.id] : []).filter((value) => codes.has(value));
      setAnswer(item.id, text ? chosen.concat(text) : chosen);
    } else {
      if (text) group.querySelectorAll("input").forEach((radio) => (radio.checked = false));
      setAnswer(item.id, text || null);
    }
  });
  if (item.type === "single") group.addEventListener("change", () => (input.value = ""));
  return element("div", { className: "field other" }, [element("label", { htmlFor: `${id}-other` }, [message("otherAnswer")]), input]);
}

/** One answer of options, yes or no, or a point on a scale, as radio buttons (clearable when optional). */
function renderChoice(field) {
  const { item, definition, language, message, answers, setAnswer, readOnly, wrapper } = field;
  let choices;
  if (item.type === "single") {
    choices = optionsOf(definition, item).map((option) => ({ value: String(option.code), label: localized(option.label, language) }));
  } else if (item.type === "boolean") {
    choices = [
      { value: "true", label: message("yes") },
      { value: "false", label: message("no") },
    ];
  } else {
    choices = [];
    for (let value = item.min; value <= item.max; value += 1) {
      let label = String(value);
      if (value === item.min && item.minLabel) label += ` – ${localized(item.minLabel, language)}`;
      if (value === item.max && item.maxLabel) label += ` – ${localized(item.maxLabel, language)}`;
      choices.push({ value: String(value), label });
    }
  }
  const toAnswer = (value) => (item.type === "boolean" ? value === "true" : item.type === "scale" ? Number(value) : value);
  const group = choiceGroup(
    field,
    "radio",
    choices,
    (value) => answers[item.id] !== undefined && String(answers[item.id]) === value,
    (value) => setAnswer(item.id, toAnswer(value)),
  );
  if (!item.required && !readOnly) {
    const clear = element("button", { type: "button", className: "link clear" }, [message("clear")]);
    clear.addEventListener("click", () => {
      group.querySelectorAll("input").forEach((input) => (input.checked = false));
      setAnswer(item.id, null);
    });
    group.append(clear);
  }
  wrapper.append(group);
  if (item.allowsOther) wrapper.append(otherAnswer(field, group, new Set(choices.map((choice) => choice.value))));
}

/** Several answers as checkboxes; an exclusive option ("none of these") clears the others and is cleared by them. */
function renderMultiple(field) {
  const { item, definition, language, answers, setAnswer, wrapper } = field;
  const options = optionsOf(definition, item);
  const exclusive = new Set(options.filter((option) => option.exclusive).map((option) => String(option.code)));
  const group = choiceGroup(
    field,
    "checkbox",
    options.map((option) => ({ value: String(option.code), label: localized(option.label, language) })),
    (value) => Array.isArray(answers[item.id]) && answers[item.id].includes(value),
    (value, checked) => {
      let chosen = Array.isArray(answers[item.id]) ? [...answers[item.id]] : [];
      if (checked) {
        chosen = exclusive.has(value) ? [value] : chosen.filter((code) => !exclusive.has(code)).concat(value);
      } else {
        chosen = chosen.filter((code) => code !== value);
      }
      group.querySelectorAll("input").forEach((input) => (input.checked = chosen.includes(input.value)));
      setAnswer(item.id, chosen);
    },
  );
  wrapper.append(group);
  if (item.allowsOther) wrapper.append(otherAnswer(field, group, new Set(options.map((option) => String(option.code)))));
}

/** A slider that shows no value and counts as unanswered until it is touched. */
function renderSlider(field) {
  const { item, language, message, answers, setAnswer, id, text, help, describedBy, requiredMark, wrapper } = field;
  wrapper.append(element("label", { htmlFor: id }, [text + requiredMark]));
  if (help) wrapper.append(help);
  const touched = answers[item.id] !== undefined;
  const input = element("input", {
    type: "range", id, min: item.min, max: item.max, step: item.step || "any",
    className: touched ? "slider" : "slider untouched", "aria-describedby": `${id}-value ${describedBy}`,
  });
  // A slider never suggests an answer: until touched it shows no value and counts as unanswered.
  input.value = touched ? answers[item.id] : (item.min + item.max) / 2;
  const ends = element("div", { className: "slider-ends", "aria-hidden": "true" });
  ends.append(element("span", {}, [item.minLabel ? localized(item.minLabel, language) : String(item.min)]));
  ends.append(element("span", {}, [item.maxLabel ? localized(item.maxLabel, language) : String(item.max)]));
  const value = element("span", { className: "status", id: `${id}-value`, "aria-live": "polite" },
    [touched ? String(answers[item.id]) : message("sliderUntouched")]);
  const touch = () => {
    input.classList.remove("untouched");
    value.textContent = input.value;
    setAnswer(item.id, Number(input.value));
  };
  input.addEventListener("input", touch);
  input.addEventListener("change", touch);
  // Tapping the thumb where it already is chooses that value too.
  input.addEventListener("pointerup", touch);
  wrapper.append(input, ends, value);
}

/** A number in the item's unit, with as many decimals as it allows. */
function renderNumber(field) {
  const { item, answers, setAnswer, id, text, help, describedBy, requiredMark, wrapper } = field;
  wrapper.append(element("label", { htmlFor: id }, [text + (item.unit ? ` (${item.unit})` : "") + requiredMark]));
  if (help) wrapper.append(help);
  const step = typeof item.decimals === "number" ? (item.decimals === 0 ? "1" : String(10 ** -item.decimals)) : "any";
  const input = element("input", {
    type: "number", id, inputMode: item.decimals === 0 ? "numeric" : "decimal", min: item.min, max: item.max, step,
    "aria-describedby": describedBy,
  });
  if (answers[item.id] !== undefined) input.value = answers[item.id];
  input.addEventListener("input", () => setAnswer(item.id, input.value === "" ? null : Number(input.value)));
  wrapper.append(input);
}

/** A text, one line or several, with its length counted against its limit. */
function renderText(field) {
  const { item, message, answers, setAnswer, id, text, help, describedBy, requiredMark, wrapper } = field;
  wrapper.append(element("label", { htmlFor: id }, [text + requiredMark]));
  if (help) wrapper.append(help);
  const limit = item.maxLength || 2000;
  if (item.format === "minutesSeconds") {
    // A duration such as 6:30, typed on a keypad with a colon; its shape says more than a count of characters.
    const input = element("input", {
      id, maxLength: 6, type: "text", inputMode: "numeric", pattern: "[0-9]{1,3}:[0-5][0-9]",
      placeholder: message("minutesSeconds"), "aria-describedby": describedBy,
    });
    input.value = answers[item.id] || "";
    input.addEventListener("input", () => setAnswer(item.id, input.value));
    wrapper.append(input);
    return;
  }
  const input = element(item.multiline ? "textarea" : "input", {
    id, maxLength: limit, type: item.multiline ? undefined : "text", "aria-describedby": `${id}-count ${describedBy}`,
  });
  input.value = answers[item.id] || "";
  const count = element("span", { className: "status", id: `${id}-count` });
  const refresh = () => (count.textContent = message("characters", { count: input.value.length, limit }));
  input.addEventListener("input", () => {
    refresh();
    setAnswer(item.id, input.value);
  });
  refresh();
  wrapper.append(input, count);
}

/** A date, a time, or both, in the device's time zone. */
function renderMoment(field) {
  const { item, answers, setAnswer, id, text, help, describedBy, requiredMark, wrapper } = field;
  wrapper.append(element("label", { htmlFor: id }, [text + requiredMark]));
  if (help) wrapper.append(help);
  const type = item.type === "dateTime" ? "datetime-local" : item.type;
  const input = element("input", { type, id, "aria-describedby": describedBy });
  // The earliest and latest answers the questionnaire accepts; a date bound covers its whole day.
  const bound = (text, time) => (item.type === "dateTime" && text.length === 10 ? `${text}T${time}` : text.slice(0, 16));
  if (item.earliest) input.min = bound(item.earliest, "00:00");
  if (item.latest) input.max = bound(item.latest, "23:59");
  if (item.type === "time" && item.step === 1) input.step = 1;
  const stored = answers[item.id];
  if (stored) input.value = item.type === "dateTime" ? toLocalInput(stored) : stored;
  input.addEventListener("change", () => {
    if (!input.value) return setAnswer(item.id, null);
    setAnswer(item.id, item.type === "dateTime" ? withOffset(input.value) : input.value);
  });
  wrapper.append(input);
}

function renderItem(item, definition, language, message, answers, setAnswer, readOnly) {
  const id = `item-${item.id}`;
  const wrapper = element("div", { className: "field question", "data-item": item.id });
  const text = localized(item.text, language);
  if (item.type === "display") {
    wrapper.append(element("p", {}, [text]));
    return wrapper;
  }
  const errorSlot = element("span", { className: "error", id: `${id}-error`, hidden: true });
  const helpText = item.help ? localized(item.help, language) : "";
  const help = helpText ? element("span", { className: "hint", id: `${id}-help` }, [helpText]) : null;
  const describedBy = [help ? `${id}-help` : null, `${id}-error`].filter(Boolean).join(" ");
  const requiredMark = item.required ? ` ${message("requiredMark")}` : "";
  const field = { item, definition, language, message, answers, setAnswer, readOnly, id, text, help, describedBy, requiredMark, wrapper };
  switch (item.type) {
    case "single":
    case "boolean":
    case "scale":
      renderChoice(field);
      break;
    case "multiple":
      renderMultiple(field);
      break;
    case "slider":
      renderSlider(field);
      break;
    case "number":
      renderNumber(field);
      break;
    case "text":
      renderText(field);
      break;
    case "date":
    case "time":
    case "dateTime":
      renderMoment(field);
      break;
    default:
      wrapper.append(element("p", {}, [text]));
  }
  wrapper.append(errorSlot);
  return wrapper;
}

/** `2026-03-02T09:30` in the device's zone as ISO 8601 with its offset. */
function withOffset(local) {
  const date = new Date(local);
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "-";
  const pad = (value) => String(Math.floor(Math.abs(value))).padStart(2, "0");
  return `${local.length === 16 ? `${local}:00` : local}${sign}${pad(offset / 60)}:${pad(offset % 60)}`;
}

function toLocalInput(iso) {
  const date = new Date(iso);
  const pad = (value) => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** The scores a patient may see, as list items. */
export function renderFeedback(definition, answers, language) {
  const list = document.getElementById("feedback-scores");
  list.replaceChildren();
  for (const score of scores(definition, answers)) {
    if (score.value === null) continue;
    const rule = definition.scores.find((candidate) => candidate.id === score.id);
    const band = score.band ? ` – ${localized(score.band.label, language)}` : "";
    list.append(element("li", {}, [`${localized(rule.title, language)}: ${score.value}${band}`]));
  }
  document.getElementById("feedback").hidden = list.children.length === 0;
}
