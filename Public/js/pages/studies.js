// Research studies: joining with consent (and a password where the study asks), leaving, withdrawing a request.

import { api, apiList } from "../lib/api.js";
import { clearErrors, markField, showProblem, showSummary } from "../lib/forms.js";
import { chosenModules, moduleChoices } from "../lib/consent.js";
import { inLanguage, message, showInLanguage } from "../lib/i18n.js";

/** What the page works on, set once by `run`. */
let list;
let status;

async function render() {
  const result = await apiList("/studies");
  if (!result.ok) return;
  list.replaceChildren();
  const studies = result.data.filter((study) => study.joinMode !== "pairingCode");
  if (!studies.length) {
    const empty = document.createElement("p");
    empty.textContent = message("noStudies");
    list.append(empty);
  }
  for (const study of studies) list.append(studyCard(study));
}

function announce(text) {
  status.textContent = text;
  status.hidden = false;
}

function studyCard(study) {
  const card = document.createElement("section");
  card.className = "card";
  const heading = document.createElement("h2");
  showInLanguage(heading, study.titles, study.title);
  card.append(heading);
  if (study.description) {
    const description = document.createElement("p");
    showInLanguage(description, study.descriptions, study.description);
    card.append(description);
  }
  const enrollment = study.enrollment;
  if (enrollment) {
    const badge = document.createElement("p");
    badge.innerHTML = '<span class="badge"></span>';
    badge.firstChild.classList.add(enrollment.status);
    badge.firstChild.textContent = message(enrollment.status === "active" ? "statusActive" : "statusRequested");
    card.append(badge);
    const leave = document.createElement("button");
    leave.type = "button";
    leave.className = "secondary";
    leave.textContent = message(enrollment.status === "active" ? "leave" : "withdraw");
    const choice = leaveChoice(study, async (erase) => {
      const result = await api("DELETE", `/studies/${study.id}/enrollment${erase ? "?erase=true" : ""}`);
      if (result.ok) {
        announce(message(erase ? "leftErased" : "left"));
        await render();
      }
    });
    leave.addEventListener("click", () => {
      leave.hidden = true;
      choice.hidden = false;
      choice.querySelector("input").focus();
    });
    choice.addEventListener("cancel-leave", () => {
      choice.hidden = true;
      leave.hidden = false;
      leave.focus();
    });
    card.append(leave, choice);
    return card;
  }
  card.append(joinForm(study));
  return card;
}

// Leaving asks how: stop and keep what was given, or stop and delete it.
function leaveChoice(study, send) {
  const panel = document.createElement("fieldset");
  panel.className = "leave-choice";
  panel.hidden = true;
  const name = `leave-${study.id}`;
  panel.innerHTML = `
    <legend></legend>
    <div class="choice"><input type="radio" name="${name}" id="${name}-keep" value="keep" checked><label for="${name}-keep"></label></div>
    <p class="hint" data-hint="keep"></p>
    <div class="choice"><input type="radio" name="${name}" id="${name}-erase" value="erase"><label for="${name}-erase"></label></div>
    <p class="hint" data-hint="erase"></p>
    <div class="actions"><button type="button" class="danger" data-confirm></button>
    <button type="button" class="secondary" data-cancel></button></div>`;
  panel.querySelector("legend").textContent = message("leaveHow");
  panel.querySelector(`label[for="${name}-keep"]`).textContent = message("leaveKeep");
  panel.querySelector('[data-hint="keep"]').textContent = message("leaveKeepHint");
  panel.querySelector(`label[for="${name}-erase"]`).textContent = message("leaveErase");
  panel.querySelector('[data-hint="erase"]').textContent = message("leaveEraseHint");
  const confirmButton = panel.querySelector("[data-confirm]");
  confirmButton.textContent = message("leaveConfirm");
  confirmButton.addEventListener("click", async () => {
    confirmButton.disabled = true;
    await send(panel.querySelector(`#${name}-erase`).checked);
    confirmButton.disabled = false;
  });
  const cancel = panel.querySelector("[data-cancel]");
  cancel.textContent = message("leaveCancel");
  cancel.addEventListener("click", () => panel.dispatchEvent(new CustomEvent("cancel-leave")));
  return panel;
}

function joinForm(study) {
  const form = document.createElement("form");
  form.noValidate = true;
  const id = `study-${study.id}`;
  form.innerHTML = `
    <div class="notice error" data-summary role="alert" tabindex="-1" hidden></div>
    <section class="consent-text"><h3></h3><div class="consent"></div></section>
    <div class="field" role="group" data-consent-group>
      <div class="choice">
        <input type="checkbox" name="accept" id="${id}-accept">
        <label for="${id}-accept"></label>
      </div>
      <span class="error" data-for="consentVersion" hidden></span>
    </div>
    <div class="field" data-password hidden>
      <label for="${id}-password"></label>
      <input type="password" name="password" id="${id}-password" maxlength="128" autocomplete="off">
      <span class="error" data-for="password" hidden></span>
    </div>
    <button type="submit"></button>`;
  // The consent is shown in full, before the box that says it was read.
  const consentTitle = form.querySelector(".consent-text h3");
  consentTitle.textContent = message("consent");
  const consent = form.querySelector(".consent");
  const consentText = inLanguage(study.consentTexts, study.consentText);
  if (consentText.lang) {
    consent.lang = consentText.lang;
    consentTitle.append(" ", message(`writtenIn.${consentText.lang}`));
  }
  for (const paragraph of consentText.text.split(/\n\s*\n/)) {
    const p = document.createElement("p");
    p.textContent = paragraph;
    consent.append(p);
  }
  form.querySelector(`label[for="${id}-accept"]`).textContent = message("consentAccept");
  form.querySelector("[data-consent-group]").setAttribute("aria-label", inLanguage(study.titles, study.title).text);
  // Optional parts of the consent are offered one by one, none chosen for the person.
  const modules = moduleChoices(study.consentModules || [], id);
  form.querySelector("[data-password]").before(modules);
  form.querySelector(`label[for="${id}-password"]`).textContent = message("studyPassword");
  form.querySelector("[data-password]").hidden = study.joinMode !== "password";
  form.querySelector("button").textContent = message("join");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form);
    if (!form.elements.accept.checked) {
      markField(form, "consentVersion", message("required"));
      return showSummary(form, message("fixErrors"));
    }
    const body = { consentVersion: study.consentVersion, modules: chosenModules(modules) };
    if (study.joinMode === "password") body.password = form.elements.password.value;
    const result = await api("POST", `/studies/${study.id}/enrollment`, body);
    if (!result.ok) return showProblem(form, result.data);
    announce(message(result.data.status === "active" ? "joined" : "requested"));
    await render();
  });
  return form;
}

export async function run() {
  list = document.getElementById("studies-list");
  status = document.getElementById("studies-status");
  await render();
}
