// The app's texts come from the page (#messages), so no script speaks a language of its own; dates are
// written in the page's language.

import { localeOf } from "./calendar.js";

const messages = Object.fromEntries(
  [...document.querySelectorAll("[data-messages] [data-key]")].map((node) => [node.dataset.key, node.textContent]),
);

export function message(key, values = {}) {
  let text = messages[key] || key;
  for (const [name, value] of Object.entries(values)) text = text.replaceAll(`{${name}}`, String(value));
  return text;
}

/**
 * The text for `count` of something, in the page's language: the page gives each counted text in its forms
 * (`key.one`, `key.other`), and the language's plural rules choose, as the server's Localizer does.
 */
export function countMessage(key, count, values = {}) {
  const form = new Intl.PluralRules(document.documentElement.lang || "en").select(count);
  const chosen = messages[`${key}.${form}`] !== undefined ? `${key}.${form}` : `${key}.other`;
  return message(chosen, { ...values, count });
}

/** The locale of the page's language for dates and numbers, as the server writes them. */
export function locale() {
  return localeOf(document.documentElement.lang);
}

export function formatDate(value, options = { dateStyle: "long" }) {
  if (!value) return "";
  const date = new Date(value.length === 10 ? `${value}T12:00:00` : value);
  return new Intl.DateTimeFormat(locale(), options).format(date);
}

export function formatDateTime(value) {
  return new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeStyle: "short" }).format(new Date(value));
}

/** A number as the page's language writes it (a decimal comma in German), with at most `decimals` decimals. */
export function formatNumber(value, decimals = 2) {
  return new Intl.NumberFormat(locale(), { maximumFractionDigits: decimals }).format(value);
}

export function genderLabel(gender) {
  return gender ? message(`gender${gender[0].toUpperCase()}${gender.slice(1)}`) : "";
}
