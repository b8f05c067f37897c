// Form helpers shared by every page: problems shown beside their fields, checks made before sending.

import { message } from "./i18n.js";

function errorSlot(form, field) {
  return form.querySelector(`[data-for="${field}"]`) || form.querySelector(`#${CSS.escape(field)}-error`);
}

export function clearErrors(form) {
  form.querySelectorAll(".error").forEach((slot) => {
    slot.textContent = "";
    slot.hidden = true;
  });
  form.querySelectorAll("[aria-invalid]").forEach((input) => input.removeAttribute("aria-invalid"));
  const summary = form.querySelector("[data-summary]");
  if (summary) {
    summary.textContent = "";
    summary.hidden = true;
  }
  const success = form.querySelector("[data-success]");
  if (success) success.hidden = true;
}

export function markField(form, field, text) {
  const slot = errorSlot(form, field);
  if (slot) {
    slot.textContent = text;
    slot.hidden = false;
  }
  const input = form.elements[field];
  if (input && input.setAttribute) input.setAttribute("aria-invalid", "true");
  else if (input && input.length) [...input].forEach((item) => item.setAttribute("aria-invalid", "true"));
  return Boolean(slot);
}

export function showSummary(form, text) {
  const summary = form.querySelector("[data-summary]");
  if (!summary) return;
  summary.textContent = text;
  summary.hidden = false;
  summary.focus();
}

/**
 * Shows a problem response: each field's message beside it (or beside the nearest enclosing field, so
 * `days.monday.0` lands at `days.monday`), the rest in the summary at the top.
 */
export function showProblem(form, problem) {
  const errors = (problem && problem.errors) || [];
  const unplaced = [];
  for (const error of errors) {
    let field = error.field || "";
    while (field && !markField(form, field, error.detail)) field = field.slice(0, Math.max(0, field.lastIndexOf(".")));
    if (!field) unplaced.push(error.detail);
  }
  const summaryText = errors.length ? [message("fixErrors"), ...unplaced].join(" ") : (problem && problem.detail) || message("network");
  showSummary(form, summaryText);
}

/**
 * Shows a form as changing a record (the heading's `data-edit` text and the cancel button) or, when `editing` is
 * false, as an empty form for a new one (the heading's `data-new` text).
 */
export function showEditing(form, editing) {
  const heading = document.getElementById("form-heading");
  heading.textContent = editing ? heading.dataset.edit : heading.dataset.new;
  form.querySelector('[data-action="cancel-edit"]').hidden = !editing;
  if (!editing) {
    form.reset();
    clearErrors(form);
  }
}

export function showSuccess(form) {
  const success = form.querySelector("[data-success]");
  if (success) {
    success.hidden = false;
    success.focus?.();
  }
}

export function values(form) {
  const data = {};
  for (const element of form.elements) {
    if (!element.name || element.disabled) continue;
    if (element.type === "checkbox") data[element.name] = element.checked;
    else if (element.type === "radio") {
      if (element.checked) data[element.name] = element.value;
      else if (!(element.name in data)) data[element.name] = "";
    } else data[element.name] = element.value;
  }
  return data;
}

/** Client-side checks the server would also make, to answer at once; returns true when the form may be sent. */
export function requireFields(form, fields) {
  let valid = true;
  for (const field of fields) {
    const input = form.elements[field];
    const empty = input.type === "checkbox" ? !input.checked : !String(values(form)[field] || "").trim();
    if (empty) {
      markField(form, field, message("required"));
      valid = false;
    }
  }
  return valid;
}

export function checkRepeat(form, field, repeatField) {
  if (form.elements[field].value !== form.elements[repeatField].value) {
    markField(form, repeatField, message("passwordsDiffer"));
    return false;
  }
  return true;
}

export function onSubmit(name, handler) {
  const form = document.querySelector(`form[data-form="${name}"]`);
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form);
    const button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    try {
      await handler(form);
    } finally {
      if (button) button.disabled = false;
    }
  });
}
