// The person's choice of a study's reinforcement messages, on the profile: how many a day (none up to the
// study's number) and when, inside the study's window, for each study that lets them choose.

import { api, apiList } from "./api.js";
import { clearErrors, showProblem, showSuccess, values } from "./forms.js";
import { message } from "./i18n.js";

export async function runMessageChoices() {
  const result = await apiList("/me/message-plans");
  const offers = result.ok ? result.data.filter((offer) => offer.personChooses) : [];
  const card = document.getElementById("message-choices");
  card.hidden = offers.length === 0;
  const template = document.getElementById("message-plan-form");
  document.getElementById("message-plans").replaceChildren(...offers.map((offer) => form(offer, template)));
}

function form(offer, template) {
  const form = template.content.firstElementChild.cloneNode(true);
  form.dataset.study = offer.studyId;
  // Each form's fields need ids of their own for their labels.
  for (const label of form.querySelectorAll("[data-label-for]")) {
    const id = `${label.dataset.labelFor}-${offer.studyId}`;
    label.htmlFor = id;
    form.elements[label.dataset.labelFor].id = id;
  }
  form.querySelector("[data-title]").textContent = offer.studyTitle;
  form.querySelector("[data-bounds]").textContent = message(offer.studyKind === "practice" ? "messageBoundsPractice" : "messageBounds", {
    count: offer.perDay, from: offer.windowStart, until: offer.windowEnd,
  });
  const fill = (plan) => {
    form.elements.perDay.value = plan.perDay;
    form.elements.windowStart.value = plan.windowStart;
    form.elements.windowEnd.value = plan.windowEnd;
  };
  form.elements.perDay.max = offer.perDay;
  for (const name of ["windowStart", "windowEnd"]) {
    form.elements[name].min = offer.windowStart;
    form.elements[name].max = offer.windowEnd;
  }
  fill(offer.choice || offer);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form);
    const data = values(form);
    const result = await api("PUT", `/me/message-plans/${offer.studyId}`, {
      perDay: data.perDay === "" ? null : Number(data.perDay), windowStart: data.windowStart, windowEnd: data.windowEnd,
    });
    if (!result.ok) return showProblem(form, result.data);
    showSuccess(form);
  });
  form.querySelector('[data-action="reset"]').addEventListener("click", async () => {
    clearErrors(form);
    const result = await api("DELETE", `/me/message-plans/${offer.studyId}`);
    if (!result.ok) return showProblem(form, result.data);
    fill(offer);
    showSuccess(form);
  });
  return form;
}
