// Consent modules as choices the person makes, and the notice that a study waits for an answer to a new
// consent version before it takes more answers.

import { api } from "./api.js";
import { message } from "./i18n.js";

/** A checkbox per optional module, each explained; checked where `granted` says so (declined otherwise). */
export function moduleChoices(modules, prefix, granted = {}) {
  const group = document.createElement("fieldset");
  group.className = "consent-modules";
  group.hidden = modules.length === 0;
  const legend = document.createElement("legend");
  legend.textContent = message("modulesLegend");
  group.append(legend);
  for (const module of modules) {
    const id = `${prefix}-module-${module}`;
    const choice = document.createElement("div");
    choice.className = "choice";
    const input = document.createElement("input");
    input.type = "checkbox";
    input.id = id;
    input.dataset.module = module;
    input.checked = granted[module] === true;
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = message(`module-${module}`);
    const hint = document.createElement("p");
    hint.className = "hint";
    hint.id = `${id}-hint`;
    hint.textContent = message(`module-${module}-hint`);
    input.setAttribute("aria-describedby", hint.id);
    choice.append(input, label);
    group.append(choice, hint);
  }
  return group;
}

/** The modules as the API takes them: every one offered, granted or declined. */
export function chosenModules(group) {
  const modules = {};
  group.querySelectorAll("input[data-module]").forEach((input) => (modules[input.dataset.module] = input.checked));
  return modules;
}

/** Shows the notice with a link to the consents page when a study waits for the person's answer. */
export async function checkConsents() {
  const notice = document.getElementById("consent-needed");
  if (!notice || document.querySelector('[data-page="consents"]')) return;
  const result = await api("GET", "/me/consents");
  if (result.ok) notice.hidden = !result.data.documents.some((document) => document.mustAnswer);
}
