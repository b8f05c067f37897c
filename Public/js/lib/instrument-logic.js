// The rules of an instrument the patient app needs offline: which sections and items are visible, how far a
// person is, what is still missing, and the scores. They mirror InterludeCore (InstrumentLogic, Scoring) and are
// tested against the same vectors (Tests/Vectors/instrument-logic.json).

/** An empty text or an empty selection is no answer. */
export function isAnswered(value) {
  if (value === undefined || value === null) return false;
  if (typeof value === "string") return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

function numeric(value) {
  if (typeof value === "number") return value;
  if (typeof value === "string" && value.trim() !== "" && !Number.isNaN(Number(value))) return Number(value);
  return null;
}

function matches(answer, value) {
  if (Array.isArray(answer)) {
    if (typeof value === "string") return answer.includes(value);
    if (typeof value === "number") return answer.some((code) => numeric(code) === value);
    return false;
  }
  if (typeof answer === "boolean" || typeof value === "boolean") return answer === value;
  if (typeof answer === "string" && typeof value === "string") return answer === value;
  const left = numeric(answer);
  const right = numeric(value);
  return left !== null && right !== null && Math.abs(left - right) < 1e-9;
}

function compare(answer, value) {
  const left = numeric(answer);
  const right = numeric(value);
  if (left !== null && right !== null) return left < right ? -1 : left > right ? 1 : 0;
  if (typeof answer === "string" && typeof value === "string") return answer < value ? -1 : answer > value ? 1 : 0;
  return null;
}

function clauseHolds(clause, answer) {
  const answered = isAnswered(answer);
  if (clause.operator === "answered") {
    const expected = typeof clause.value === "boolean" ? clause.value : true;
    return answered === expected;
  }
  if (!answered || clause.value === undefined || clause.value === null) return false;
  switch (clause.operator) {
    case "equals":
      return matches(answer, clause.value);
    case "notEquals":
      return !matches(answer, clause.value);
    case "greater": {
      const order = compare(answer, clause.value);
      return order !== null && order > 0;
    }
    case "less": {
      const order = compare(answer, clause.value);
      return order !== null && order < 0;
    }
    case "atLeast": {
      const order = compare(answer, clause.value);
      return order !== null && order >= 0;
    }
    case "atMost": {
      const order = compare(answer, clause.value);
      return order !== null && order <= 0;
    }
    default:
      return false;
  }
}

function index(definition) {
  const items = new Map();
  const sectionOf = new Map();
  for (const section of definition.sections) {
    for (const item of section.items) {
      items.set(item.id, item);
      sectionOf.set(item.id, section);
    }
  }
  return { items, sectionOf };
}

/** The visible sections and items for `answers`; an answer to a hidden item does not count in conditions. */
export function visibility(definition, answers) {
  const { items, sectionOf } = index(definition);
  const itemState = new Map();
  const sectionState = new Map();
  const visiting = new Set();

  // Where a reference leads back to an item being decided (items that depend on each other in a circle), that
  // item's answer counts as given.
  const holds = (condition) => {
    const results = (condition.clauses || []).map((clause) =>
      clauseHolds(
        clause,
        visiting.has(`item:${clause.item}`) || itemVisible(clause.item) ? answers[clause.item] : undefined,
      ),
    );
    for (const group of condition.groups || []) results.push(holds(group));
    return (condition.mode || "all") === "any" ? results.includes(true) : results.every(Boolean);
  };

  function sectionVisible(section) {
    if (sectionState.has(section.id)) return sectionState.get(section.id);
    const marker = `section:${section.id}`;
    if (visiting.has(marker)) return false;
    visiting.add(marker);
    const visible = section.visibleWhen ? holds(section.visibleWhen) : true;
    visiting.delete(marker);
    sectionState.set(section.id, visible);
    return visible;
  }

  function itemVisible(id) {
    if (itemState.has(id)) return itemState.get(id);
    const item = items.get(id);
    if (!item) return false;
    const marker = `item:${id}`;
    if (visiting.has(marker)) return false;
    visiting.add(marker);
    const visible = sectionVisible(sectionOf.get(id)) && (item.visibleWhen ? holds(item.visibleWhen) : true);
    visiting.delete(marker);
    itemState.set(id, visible);
    return visible;
  }

  const sections = new Set();
  const visibleItems = new Set();
  for (const section of definition.sections) {
    if (!sectionVisible(section)) continue;
    sections.add(section.id);
    for (const item of section.items) if (itemVisible(item.id)) visibleItems.add(item.id);
  }
  return { sections, items: visibleItems };
}

function questions(definition) {
  return definition.sections.flatMap((section) => section.items).filter((item) => item.type !== "display");
}

/** Answered and total visible questions (display texts do not count). */
export function progress(definition, answers) {
  const visible = visibility(definition, answers).items;
  const shown = questions(definition).filter((item) => visible.has(item.id));
  return { answered: shown.filter((item) => isAnswered(answers[item.id])).length, total: shown.length };
}

/** Required visible questions without an answer, in the order a person meets them. */
export function missingRequired(definition, answers) {
  const visible = visibility(definition, answers).items;
  return questions(definition)
    .filter((item) => item.required && visible.has(item.id) && !isAnswered(answers[item.id]))
    .map((item) => item.id);
}

/** The options an item offers: its own, else its section's shared scale. */
export function optionsOf(definition, item) {
  if (item.options && item.options.length) return item.options;
  const { sectionOf } = index(definition);
  return sectionOf.get(item.id)?.options || [];
}

function optionValue(option) {
  if (typeof option.score === "number") return option.score;
  return numeric(String(option.code));
}

export function numericValue(definition, item, answer) {
  switch (item.type) {
    case "single": {
      const option = optionsOf(definition, item).find((candidate) => String(candidate.code) === answer);
      return option ? optionValue(option) : null;
    }
    case "multiple":
      if (!Array.isArray(answer)) return null;
      return optionsOf(definition, item)
        .filter((option) => answer.includes(String(option.code)))
        .reduce((sum, option) => sum + (optionValue(option) ?? 0), 0);
    case "boolean":
      return typeof answer === "boolean" ? (answer ? 1 : 0) : null;
    case "scale":
    case "slider":
    case "number":
      return typeof answer === "number" ? answer : null;
    default:
      return null;
  }
}

function valueRange(definition, item) {
  switch (item.type) {
    case "single": {
      const values = optionsOf(definition, item).map(optionValue).filter((value) => value !== null);
      return values.length ? [Math.min(...values), Math.max(...values)] : null;
    }
    case "multiple": {
      const values = optionsOf(definition, item).map(optionValue).filter((value) => value !== null);
      if (!values.length) return null;
      const sum = (list) => list.reduce((total, value) => total + value, 0);
      return [sum(values.filter((value) => value < 0)), sum(values.filter((value) => value > 0))];
    }
    case "boolean":
      return [0, 1];
    case "scale":
    case "slider":
    case "number":
      return typeof item.min === "number" && typeof item.max === "number" ? [item.min, item.max] : null;
    default:
      return null;
  }
}

/** Half away from zero, to `decimals` places. */
function rounded(value, decimals) {
  const scale = 10 ** decimals;
  return (Math.sign(value) * Math.round(Math.abs(value) * scale)) / scale;
}

/** Every score rule applied to `answers`, each with the band its value falls in. */
export function scores(definition, answers) {
  const visible = visibility(definition, answers).items;
  const { items } = index(definition);
  return (definition.scores || []).map((rule) => {
    const decimals = typeof rule.decimals === "number" ? rule.decimals : rule.method === "sum" ? 0 : 2;
    const values = [];
    for (const id of rule.items) {
      const item = items.get(id);
      if (!item || !visible.has(id) || !isAnswered(answers[id])) continue;
      let value = numericValue(definition, item, answers[id]);
      if (value === null) continue;
      const range = (rule.reverse || []).includes(id) ? valueRange(definition, item) : null;
      if (range) value = range[0] + range[1] - value;
      values.push(value);
    }
    const minimum = typeof rule.minAnswered === "number" ? rule.minAnswered : rule.items.length;
    if (!values.length || values.length < minimum) return { id: rule.id, value: null, band: null };
    const total = values.reduce((sum, value) => sum + value, 0);
    let raw;
    if (rule.method === "mean") raw = total / values.length;
    else raw = rule.prorate && values.length < rule.items.length ? (total * rule.items.length) / values.length : total;
    const value = rounded(raw * (typeof rule.factor === "number" ? rule.factor : 1), decimals);
    const band = (rule.bands || []).find((candidate) => value >= candidate.min - 1e-9 && value <= candidate.max + 1e-9);
    return { id: rule.id, value, band: band || null };
  });
}

/** The text of a localised value in `language`, else English, else any. */
export function localized(text, language) {
  if (text === undefined || text === null) return "";
  if (typeof text === "string") return text;
  return text[language] ?? text.en ?? Object.values(text)[0] ?? "";
}
