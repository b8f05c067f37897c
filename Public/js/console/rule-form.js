// The rule form: the questions, scores and bands offered in each condition are those of the questionnaire chosen.
const instrument = document.getElementById("instrumentKey");
const template = document.getElementById("rule-targets");

function offerTargetsOf(key) {
  const group = template.content.querySelector(`[data-instrument="${CSS.escape(key)}"]`);
  if (!group) return;
  for (const select of document.querySelectorAll("[data-rule-target]")) {
    const chosen = select.value;
    const empty = select.options[0].cloneNode(true);
    select.replaceChildren(empty, ...[...group.querySelector("select").children].map((node) => node.cloneNode(true)));
    select.value = [...select.options].some((option) => option.value === chosen) ? chosen : "";
  }
  for (const list of document.querySelectorAll("[data-rule-bands]")) {
    list.replaceChildren(...[...group.querySelector("datalist").children].map((node) => node.cloneNode(true)));
  }
}

if (instrument && template) {
  instrument.addEventListener("change", () => offerTargetsOf(instrument.value));
}
