// A questionnaire as the app shows it, for the console's editor: the definition comes from the page that frames
// this one (same origin only), and answers are checked and scored here but never sent.

import { localized } from "../lib/instrument-logic.js";
import { message } from "../lib/i18n.js";
import { setText } from "../lib/page.js";
import { renderFeedback, runQuestionnaire } from "../lib/questionnaire.js";
import { forgetDraft } from "../lib/storage.js";

const PROMPT = { id: "preview", status: "open" };

/** Shows the definition afresh: a new form, so the last one's answers and listeners are gone. */
function show(definition) {
  const language = document.documentElement.lang;
  const old = document.getElementById("questionnaire");
  const form = old.cloneNode(true);
  form.querySelector("#sections").replaceChildren();
  form.querySelectorAll("input, textarea, select, button").forEach((input) => (input.disabled = false));
  old.replaceWith(form);
  document.querySelector(".sticky-actions").hidden = false;
  for (const id of ["questionnaire-status", "questionnaire-outro", "feedback"]) document.getElementById(id).hidden = true;
  document.getElementById("questionnaire-title").textContent = localized(definition.title, language) || "–";
  setText("questionnaire-description", definition.description ? localized(definition.description, language) : "");
  forgetDraft(PROMPT.id);
  runQuestionnaire({
    prompt: PROMPT,
    definition,
    language,
    submit: async (answered) => ({ ok: true, status: 200, data: answered }),
    onDone: (response) => {
      const status = document.getElementById("questionnaire-status");
      status.className = "notice ok";
      status.textContent = message("previewDone");
      status.hidden = false;
      if (definition.outro) setText("questionnaire-outro", localized(definition.outro, language));
      document.getElementById("questionnaire-outro").hidden = !definition.outro;
      if (definition.patientFeedback) renderFeedback(definition, response.answers, language);
    },
  });
}

export async function run() {
  window.addEventListener("message", (event) => {
    if (event.origin !== location.origin || event.data?.type !== "interlude:preview") return;
    try {
      show(event.data.definition);
      const items = document.querySelectorAll("#sections [data-item]").length;
      window.parent.postMessage({ type: "interlude:previewed", items, serial: event.data.serial }, location.origin);
    } catch (error) {
      window.parent.postMessage({ type: "interlude:preview-failed", detail: String(error), serial: event.data.serial }, location.origin);
    }
  });
  if (window.parent !== window) window.parent.postMessage({ type: "interlude:preview-ready" }, location.origin);
}
