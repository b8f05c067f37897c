// The console's questionnaire editor: the definition is kept as one object, edited through fields built from it,
// written to the form's JSON field on every change and shown, as the patient app shows it, in the preview frame.
// The server checks and stores it as a draft version on save; this page checks nothing itself.

import { element } from "../lib/dom.js";
import { countMessage, message } from "../lib/i18n.js";

const TYPES = ["single", "multiple", "boolean", "scale", "slider", "number", "text", "date", "time", "dateTime", "display"];
const CHOICE = new Set(["single", "multiple"]);
const RANGED = new Set(["scale", "slider", "number"]);
const SCORED = new Set(["single", "multiple", "boolean", "scale", "slider", "number"]);
const OPERATORS = ["equals", "notEquals", "greater", "less", "atLeast", "atMost", "answered"];
const LANGUAGES = ["en", "de"];

const field = document.getElementById("definition");
const root = document.getElementById("editor");
const frame = document.getElementById("preview");
const previewStatus = document.getElementById("preview-status");
let model;
let nextID = 0;
let previewTimer;
/** The number of the last definition sent to the preview; its answer says whether the preview is current. */
let sent = 0;

/** A labelled input bound to `object[key]`; `parse` turns its text into the stored value (undefined removes it). */
function input(label, object, key, { type = "text", parse = (text) => text, format = (value) => value ?? "", name } = {}) {
  const id = `editor-${++nextID}`;
  const control = element("input", {
    id,
    type,
    value: format(object[key]),
    "data-field": name,
    oninput: (event) => {
      const value = parse(event.target.value);
      if (value === undefined || value === "") delete object[key];
      else object[key] = value;
      changed();
    },
  });
  return element("div", { className: "field" }, [element("label", { htmlFor: id }, [label]), control]);
}

function checkbox(label, object, key, { structural = false, name } = {}) {
  const id = `editor-${++nextID}`;
  return element("div", { className: "choice" }, [
    element("input", {
      id,
      type: "checkbox",
      checked: Boolean(object[key]),
      "data-field": name,
      onchange: (event) => {
        if (event.target.checked) object[key] = true;
        else delete object[key];
        structural ? rebuild() : changed();
      },
    }),
    element("label", { htmlFor: id }, [label]),
  ]);
}

function select(label, object, key, choices, { structural = true, name, allowNone = false } = {}) {
  const id = `editor-${++nextID}`;
  const control = element(
    "select",
    {
      id,
      "data-field": name,
      onchange: (event) => {
        if (event.target.value === "") delete object[key];
        else object[key] = event.target.value;
        structural ? rebuild() : changed();
      },
    },
    [allowNone ? element("option", { value: "" }, ["–"]) : null, ...choices.map(([value, text]) => element("option", { value }, [text]))],
  );
  control.value = object[key] ?? "";
  return element("div", { className: "field" }, [element("label", { htmlFor: id }, [label]), control]);
}

/** A condition's value as the compared question answers: an option's code as text, yes or no, else a number. */
function answerValue(clause, text) {
  const trimmed = text.trim();
  if (clause.operator === "answered" || trimmed === "true" || trimmed === "false") return trimmed !== "false";
  const item = model.sections.flatMap((section) => section.items).find((candidate) => candidate.id === clause.item);
  if (item && CHOICE.has(item.type)) return trimmed;
  return trimmed !== "" && !Number.isNaN(Number(trimmed)) ? Number(trimmed) : trimmed;
}

const number = (text) => (text.trim() === "" || Number.isNaN(Number(text)) ? undefined : Number(text));

/** One text in both languages; left empty in both, it is not part of the definition. */
function localized(label, object, key, name) {
  const fields = LANGUAGES.map((language) => {
    const id = `editor-${++nextID}`;
    const control = element("input", {
      id,
      type: "text",
      value: object[key]?.[language] ?? "",
      "data-field": name && `${name}.${language}`,
      oninput: (event) => {
        const value = { ...(object[key] ?? {}), [language]: event.target.value };
        if (!value[language]) delete value[language];
        if (Object.keys(value).length) object[key] = value;
        else delete object[key];
        changed();
      },
    });
    return element("div", { className: "field" }, [element("label", { htmlFor: id }, [`${label} (${message(`language.${language}`)})`]), control]);
  });
  return element("div", { className: "grid two" }, fields);
}

function button(text, action, attributes = {}) {
  return element("button", { type: "button", className: "secondary", onclick: action, ...attributes }, [text]);
}

function move(list, index, by) {
  const target = index + by;
  if (target < 0 || target >= list.length) return;
  [list[index], list[target]] = [list[target], list[index]];
  rebuild();
}

function listControls(list, index, removeLabel) {
  return element("p", { className: "actions" }, [
    button(message("moveUp"), () => move(list, index, -1), { disabled: index === 0 }),
    button(message("moveDown"), () => move(list, index, 1), { disabled: index === list.length - 1 }),
    button(removeLabel, () => {
      list.splice(index, 1);
      rebuild();
    }),
  ]);
}

function optionsEditor(owner, name) {
  const options = owner.options ?? [];
  const rows = options.map((option, index) =>
    element("div", { className: "editor-row" }, [
      input(message("code"), option, "code", { name: `${name}.options.${index}.code` }),
      localized(message("label"), option, "label", `${name}.options.${index}.label`),
      input(message("score"), option, "score", { type: "number", parse: number }),
      checkbox(message("exclusive"), option, "exclusive"),
      button(message("removeOption"), () => {
        options.splice(index, 1);
        rebuild();
      }),
    ]),
  );
  return element("fieldset", { className: "editor-options" }, [
    element("legend", {}, [message("options")]),
    ...rows,
    button(message("addOption"), () => {
      (owner.options ??= []).push({ code: String(options.length), label: { en: "", de: "" } });
      rebuild();
    }, { "data-action": `${name}.addOption` }),
  ]);
}

function answerIDs() {
  return model.sections.flatMap((section) => section.items).filter((item) => item.type !== "display").map((item) => item.id);
}

function conditionEditor(owner, name) {
  const condition = owner.visibleWhen;
  const legend = element("legend", {}, [message("condition")]);
  if (!condition) {
    return element("fieldset", { className: "editor-condition" }, [
      legend,
      element("p", { className: "hint" }, [message("conditionNone")]),
      button(message("addClause"), () => {
        owner.visibleWhen = { mode: "all", clauses: [{ item: answerIDs()[0] ?? "", operator: "answered", value: true }] };
        rebuild();
      }, { "data-action": `${name}.addCondition` }),
    ]);
  }
  const clauses = condition.clauses.map((clause, index) => {
    return element("div", { className: "editor-row" }, [
      select(message("clauseItem"), clause, "item", answerIDs().map((id) => [id, id]), { structural: false }),
      select(message("operator"), clause, "operator", OPERATORS.map((operator) => [operator, message(`op.${operator}`)]), { structural: false }),
      input(message("value"), clause, "value", { parse: (text) => answerValue(clause, text), format: (value) => (value === undefined ? "" : String(value)) }),
      button(message("removeClause"), () => {
        condition.clauses.splice(index, 1);
        if (!condition.clauses.length && !(condition.groups || []).length) delete owner.visibleWhen;
        rebuild();
      }),
    ]);
  });
  return element("fieldset", { className: "editor-condition" }, [
    legend,
    select(message("mode"), condition, "mode", [["all", message("mode.all")], ["any", message("mode.any")]], { structural: false }),
    ...clauses,
    ...((condition.groups || []).length ? [element("p", { className: "hint" }, [message("nestedGroups")])] : []),
    button(message("addClause"), () => {
      condition.clauses.push({ item: answerIDs()[0] ?? "", operator: "answered", value: true });
      rebuild();
    }),
  ]);
}

function itemEditor(section, item, index, sectionIndex) {
  const name = `sections.${sectionIndex}.items.${index}`;
  const parts = [
    element("h4", {}, [`${message("item")} ${index + 1}: ${item.id || "–"}`]),
    element("div", { className: "grid two" }, [
      input(message("itemId"), item, "id", { name: `${name}.id` }),
      select(message("type"), item, "type", TYPES.map((type) => [type, message(`type.${type}`)]), { name: `${name}.type` }),
    ]),
    localized(message("text"), item, "text", `${name}.text`),
  ];
  if (item.type !== "display") {
    parts.push(localized(message("help"), item, "help"), checkbox(message("required"), item, "required", { name: `${name}.required` }));
  }
  if (CHOICE.has(item.type)) {
    if (section.options?.length && !item.options?.length) parts.push(element("p", { className: "hint" }, [message("usesSectionScale")]));
    else parts.push(optionsEditor(item, name));
  }
  if (RANGED.has(item.type)) {
    parts.push(
      element("div", { className: "grid three" }, [
        input(message("min"), item, "min", { type: "number", parse: number, name: `${name}.min` }),
        input(message("max"), item, "max", { type: "number", parse: number, name: `${name}.max` }),
        input(message("step"), item, "step", { type: "number", parse: number }),
      ]),
    );
  }
  if (item.type === "scale" || item.type === "slider") {
    parts.push(localized(message("minLabel"), item, "minLabel"), localized(message("maxLabel"), item, "maxLabel"));
  }
  if (item.type === "number") {
    parts.push(element("div", { className: "grid two" }, [input(message("decimals"), item, "decimals", { type: "number", parse: number }), input(message("unit"), item, "unit")]));
  }
  if (item.type === "text") {
    parts.push(input(message("maxLength"), item, "maxLength", { type: "number", parse: number }), checkbox(message("multiline"), item, "multiline"));
  }
  parts.push(conditionEditor(item, name), listControls(section.items, index, message("removeItem")));
  return element("div", { className: "editor-item card", "data-editor-item": item.id }, parts);
}

/** Whether the section's choices share one answer scale (a matrix), whose options the section then holds. */
function sharedScale(section, name) {
  const id = `editor-${++nextID}`;
  return element("div", { className: "choice" }, [
    element("input", {
      id,
      type: "checkbox",
      checked: Boolean(section.options),
      "data-field": `${name}.sharedScale`,
      onchange: (event) => {
        if (event.target.checked) section.options = [{ code: "0", label: { en: "", de: "" } }];
        else delete section.options;
        rebuild();
      },
    }),
    element("label", { htmlFor: id }, [message("sharedScale")]),
  ]);
}

function sectionEditor(section, index) {
  const name = `sections.${index}`;
  return element("fieldset", { className: "editor-section card", "data-editor-section": section.id }, [
    element("legend", {}, [`${message("section")} ${index + 1}`]),
    input(message("sectionId"), section, "id", { name: `${name}.id` }),
    localized(message("sectionTitle"), section, "title", `${name}.title`),
    localized(message("sectionDescription"), section, "description"),
    sharedScale(section, name),
    section.options ? optionsEditor(section, name) : null,
    conditionEditor(section, name),
    ...section.items.map((item, itemIndex) => itemEditor(section, item, itemIndex, index)),
    element("p", { className: "actions" }, [
      button(message("addItem"), () => {
        section.items.push({ id: `item-${answerIDs().length + 1}`, type: "single", text: { en: "", de: "" }, required: true });
        rebuild();
      }, { "data-action": `${name}.addItem` }),
    ]),
    listControls(model.sections, index, message("removeSection")),
  ]);
}

function bandEditor(rule, ruleIndex) {
  const bands = rule.bands ?? [];
  return element("fieldset", {}, [
    element("legend", {}, [message("bands")]),
    ...bands.map((band, index) =>
      element("div", { className: "editor-row" }, [
        input(message("bandMin"), band, "min", { type: "number", parse: number, name: `scores.${ruleIndex}.bands.${index}.min` }),
        input(message("bandMax"), band, "max", { type: "number", parse: number, name: `scores.${ruleIndex}.bands.${index}.max` }),
        input(message("level"), band, "level"),
        localized(message("label"), band, "label", `scores.${ruleIndex}.bands.${index}.label`),
        button(message("removeBand"), () => {
          bands.splice(index, 1);
          rebuild();
        }),
      ]),
    ),
    button(message("addBand"), () => {
      (rule.bands ??= []).push({ min: 0, max: 0, label: { en: "", de: "" } });
      rebuild();
    }, { "data-action": `scores.${ruleIndex}.addBand` }),
  ]);
}

/** Check boxes for the scoreable items a rule names (or reverses). */
function itemChoice(label, rule, key, candidates) {
  const chosen = new Set(rule[key] ?? []);
  return element("fieldset", { className: "choices inline" }, [
    element("legend", {}, [label]),
    ...candidates.map((id) => {
      const inputID = `editor-${++nextID}`;
      return element("div", { className: "choice" }, [
        element("input", {
          id: inputID,
          type: "checkbox",
          checked: chosen.has(id),
          "data-field": `${key}:${id}`,
          onchange: (event) => {
            event.target.checked ? chosen.add(id) : chosen.delete(id);
            rule[key] = candidates.filter((candidate) => chosen.has(candidate));
            if (key === "reverse" && !rule.reverse.length) delete rule.reverse;
            changed();
          },
        }),
        element("label", { htmlFor: inputID }, [id]),
      ]);
    }),
  ]);
}

function scoresEditor() {
  const scores = model.scores ?? [];
  const candidates = model.sections.flatMap((section) => section.items).filter((item) => SCORED.has(item.type)).map((item) => item.id);
  return element("section", { className: "card", id: "editor-scores" }, [
    element("h2", {}, [message("scores")]),
    ...scores.map((rule, index) =>
      element("div", { className: "editor-score" }, [
        element("div", { className: "grid two" }, [
          input(message("scoreId"), rule, "id", { name: `scores.${index}.id` }),
          select(message("method"), rule, "method", [["sum", message("method.sum")], ["mean", message("method.mean")]], { structural: false }),
        ]),
        localized(message("scoreTitle"), rule, "title", `scores.${index}.title`),
        itemChoice(message("scoreItems"), rule, "items", candidates),
        itemChoice(message("reverse"), rule, "reverse", candidates),
        element("div", { className: "grid three" }, [
          input(message("minAnswered"), rule, "minAnswered", { type: "number", parse: number }),
          input(message("factor"), rule, "factor", { type: "number", parse: number }),
          input(message("decimals"), rule, "decimals", { type: "number", parse: number }),
        ]),
        bandEditor(rule, index),
        listControls(scores, index, message("removeScore")),
      ]),
    ),
    button(message("addScore"), () => {
      (model.scores ??= []).push({ id: `score-${scores.length + 1}`, title: { en: "", de: "" }, method: "sum", items: [] });
      rebuild();
    }, { "data-action": "addScore" }),
  ]);
}

function rebuild() {
  root.replaceChildren(
    element("section", { className: "card", id: "editor-about" }, [
      input(message("key"), model, "key", { name: "key" }),
      localized(message("title"), model, "title", "title"),
      localized(message("description"), model, "description"),
      localized(message("outro"), model, "outro"),
      checkbox(message("patientFeedback"), model, "patientFeedback"),
    ]),
    ...model.sections.map(sectionEditor),
    element("p", { className: "actions" }, [
      button(message("addSection"), () => {
        model.sections.push({ id: `section-${model.sections.length + 1}`, items: [] });
        rebuild();
      }, { "data-action": "addSection" }),
    ]),
    scoresEditor(),
  );
  changed();
}

/** Writes the JSON field and, a moment later, shows the questionnaire in the preview. */
function changed() {
  field.value = JSON.stringify(model, null, 2);
  previewStatus.dataset.current = "false";
  clearTimeout(previewTimer);
  previewTimer = setTimeout(() => {
    previewTimer = undefined;
    showPreview();
  }, 250);
}

function showPreview() {
  frame.contentWindow?.postMessage({ type: "interlude:preview", definition: JSON.parse(field.value), serial: ++sent }, location.origin);
}

function load() {
  try {
    model = JSON.parse(field.value);
  } catch {
    previewStatus.textContent = message("jsonInvalid");
    return false;
  }
  model.sections ??= [];
  model.sections.forEach((section) => (section.items ??= []));
  return true;
}

window.addEventListener("message", (event) => {
  if (event.origin !== location.origin || event.source !== frame.contentWindow) return;
  if (event.data?.type === "interlude:preview-ready") showPreview();
  if (event.data?.serial !== sent) return;
  if (event.data?.type === "interlude:previewed") previewStatus.textContent = countMessage("previewShown", event.data.items);
  if (event.data?.type === "interlude:preview-failed") previewStatus.textContent = message("previewFailed");
  previewStatus.dataset.current = String(!previewTimer);
});

field.addEventListener("change", () => {
  if (load()) rebuild();
});

if (load()) {
  document.getElementById("json-details").open = false;
  rebuild();
}
