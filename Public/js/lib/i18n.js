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

/**
 * A text a study wrote per language (`{ en, de }`), in the page's language, else in one it is written in:
 * `{ text, lang }` with `lang` naming that other language, or null when the person reads their own.
 */
export function inLanguage(texts, plain = "") {
  const own = document.documentElement.lang || "en";
  if (texts?.[own]) return { text: texts[own], lang: null };
  const other = Object.entries(texts || {}).find(([, text]) => text);
  return other ? { text: other[1], lang: other[0] } : { text: plain, lang: null };
}

/**
 * Fills `node` with a study's text as `inLanguage` picks it; text in the other language is marked: `lang` set for
 * screen readers, and a note saying which language it is written in.
 */
export function showInLanguage(node, texts, plain = "") {
  const { text, lang } = inLanguage(texts, plain);
  node.textContent = text;
  if (!lang) return;
  node.lang = lang;
  const note = document.createElement("span");
  note.className = "other-language";
  note.lang = document.documentElement.lang;
  note.textContent = message(`writtenIn.${lang}`);
  node.append(" ", note);
}
