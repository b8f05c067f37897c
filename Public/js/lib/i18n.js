// The app's texts come from the page (#messages), so no script speaks a language of its own; dates are
// written in the page's language.

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

export function formatDate(value) {
  if (!value) return "";
  const date = new Date(value.length === 10 ? `${value}T12:00:00` : value);
  return new Intl.DateTimeFormat(document.documentElement.lang, { dateStyle: "long" }).format(date);
}

export function formatDateTime(value) {
  return new Intl.DateTimeFormat(document.documentElement.lang, { dateStyle: "medium", timeStyle: "short" }).format(
    new Date(value),
  );
}

export function genderLabel(gender) {
  return gender ? message(`gender${gender[0].toUpperCase()}${gender.slice(1)}`) : "";
}
