// "My times": questionnaires to start whenever the participant wants, and their own times for the plans a
// study lets them adjust, inside the study's bounds.

import { api, apiList } from "../lib/api.js";
import { clearErrors, showProblem } from "../lib/forms.js";
import { message } from "../lib/i18n.js";
import { element } from "../lib/dom.js";

const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

function field(label, input, errorFor) {
  const id = input.id;
  const wrapper = element("div", { className: "field" }, [element("label", { htmlFor: id, textContent: label }), input]);
  if (errorFor) {
    const error = element("span", { className: "error", hidden: true });
    error.dataset.for = errorFor;
    wrapper.append(error);
  }
  return wrapper;
}

function errorSlot(name) {
  const slot = element("span", { className: "error", hidden: true });
  slot.dataset.for = name;
  return slot;
}

/** One row of a weekday: from, until and how many prompts inside. */
function windowRow(prefix, window, bounds) {
  const row = element("div", { className: "field-row window" });
  row.append(
    field(message("from"), element("input", { type: "time", id: `${prefix}-start`, value: window.start, step: 300 })),
    field(message("until"), element("input", { type: "time", id: `${prefix}-end`, value: window.end, step: 300 })),
    field(
      message("count"),
      element("input", {
        type: "number",
        id: `${prefix}-count`,
        value: window.count,
        min: bounds.minCount,
        max: bounds.maxCount,
        inputMode: "numeric",
      }),
    ),
  );
  return row;
}

function windowsForm(plan, form) {
  const current = (plan.adjustment && plan.adjustment.days) || plan.pattern.days || {};
  const fallback = { start: plan.bounds.earliest, end: plan.bounds.latest, count: plan.bounds.minCount };
  for (const weekday of WEEKDAYS) {
    const windows = current[weekday] || [];
    const prefix = `plan-${plan.planId}-${weekday}`;
    const set = element("fieldset", { className: "weekday" });
    set.dataset.weekday = weekday;
    const toggle = element("input", { type: "checkbox", id: `${prefix}-on`, checked: windows.length > 0 });
    set.append(
      element("legend", {}, [
        element("span", { className: "choice" }, [
          toggle,
          element("label", { htmlFor: toggle.id, textContent: message(`weekday.${weekday}`) }),
        ]),
      ]),
    );
    const rows = element("div", { className: "windows" });
    (windows.length ? windows : [fallback]).forEach((window, index) => rows.append(windowRow(`${prefix}-${index}`, window, plan.bounds)));
    const setEnabled = () => rows.querySelectorAll("input").forEach((input) => (input.disabled = !toggle.checked));
    toggle.addEventListener("change", setEnabled);
    setEnabled();
    set.append(rows, errorSlot(`days.${weekday}`));
    form.append(set);
  }
  form.append(errorSlot("days"));
  return () => {
    const days = {};
    for (const set of form.querySelectorAll("fieldset.weekday")) {
      if (!set.querySelector('input[type="checkbox"]').checked) continue;
      days[set.dataset.weekday] = [...set.querySelectorAll(".window")].map((row) => {
        const [start, end, count] = row.querySelectorAll("input");
        return { start: start.value, end: end.value, count: Number(count.value) };
      });
    }
    return { days };
  };
}

function timesForm(plan, form) {
  const current = plan.adjustment && plan.adjustment.times ? plan.adjustment : plan.pattern;
  const times = element("fieldset", { className: "times" }, [element("legend", { textContent: message("times") })]);
  times.append(element("p", { className: "hint", textContent: message("timesHint") }));
  for (let index = 0; index < plan.bounds.maxCount; index++) {
    const id = `plan-${plan.planId}-time-${index}`;
    const input = element("input", { type: "time", id, value: (current.times || [])[index] || "", step: 300 });
    times.append(field(`${message("times")} ${index + 1}`, input, `times.${index}`));
  }
  times.append(errorSlot("times"));
  const weekdays = element("fieldset", { className: "choices" }, [element("legend", { textContent: message("days") })]);
  const chosen = current.weekdays && current.weekdays.length ? current.weekdays : WEEKDAYS;
  for (const weekday of WEEKDAYS) {
    const id = `plan-${plan.planId}-on-${weekday}`;
    const box = element("input", { type: "checkbox", id, value: weekday, checked: chosen.includes(weekday) });
    weekdays.append(
      element("div", { className: "choice" }, [box, element("label", { htmlFor: id, textContent: message(`weekday.${weekday}`) })]),
    );
  }
  weekdays.append(errorSlot("weekdays"));
  form.append(times, weekdays);
  return () => ({
    times: [...times.querySelectorAll('input[type="time"]')].map((input) => input.value).filter(Boolean),
    weekdays: [...weekdays.querySelectorAll("input:checked")].map((input) => input.value),
  });
}

/** The one time of a weekly or monthly questionnaire. */
function timeForm(plan, form) {
  const id = `plan-${plan.planId}-time`;
  const value = (plan.adjustment && plan.adjustment.time) || plan.pattern.time;
  const input = element("input", { type: "time", id, value, min: plan.bounds.earliest, max: plan.bounds.latest, step: 300 });
  form.append(field(message("time"), input, "time"));
  return () => ({ time: input.value });
}

/** Where the plan offers both: the person's choice of random windows or fixed times, each with its own form. */
function modeForm(plan, form) {
  const chosen = plan.adjustment ? (plan.adjustment.times ? "fixedTimes" : "randomWindows") : plan.pattern.kind;
  const choices = element("fieldset", { className: "choices mode" }, [element("legend", { textContent: message("mode") })]);
  for (const mode of ["randomWindows", "fixedTimes"]) {
    const id = `plan-${plan.planId}-mode-${mode}`;
    const radio = element("input", { type: "radio", id, name: `plan-${plan.planId}-mode`, value: mode, checked: mode === chosen });
    choices.append(element("div", { className: "choice" }, [radio, element("label", { htmlFor: id, textContent: message(`mode.${mode}`) })]));
  }
  const parts = { randomWindows: element("div"), fixedTimes: element("div") };
  const readers = { randomWindows: windowsForm(plan, parts.randomWindows), fixedTimes: timesForm(plan, parts.fixedTimes) };
  const current = () => choices.querySelector("input:checked").value;
  const show = () => Object.entries(parts).forEach(([mode, part]) => (part.hidden = mode !== current()));
  choices.addEventListener("change", show);
  form.append(choices, parts.randomWindows, parts.fixedTimes);
  show();
  return () => readers[current()]();
}

function planCard(plan, announce, reload) {
  const card = element("section", { className: "card adjustable" });
  card.dataset.plan = plan.planId;
  card.append(element("h3", { textContent: plan.title }));
  const once = ["weekly", "monthly"].includes(plan.pattern.kind);
  card.append(
    element("p", {
      className: "hint",
      textContent: message(once ? "boundsTime" : "bounds", {
        earliest: plan.bounds.earliest,
        latest: plan.bounds.latest,
        min: plan.bounds.minCount,
        max: plan.bounds.maxCount,
      }),
    }),
  );
  // A therapist's plan is the therapist's times; a research study's the study's.
  const byWhom = (key) => (plan.studyKind === "practice" ? `${key}Practice` : key);
  card.append(element("p", { className: "badge", textContent: message(plan.adjustment ? "own" : byWhom("studyTimes")) }));
  const form = element("form", { noValidate: true });
  form.append(element("div", { className: "notice error", role: "alert", tabIndex: -1, hidden: true }));
  form.lastChild.dataset.summary = "";
  const read = once
    ? timeForm(plan, form)
    : plan.bounds.eitherMode
      ? modeForm(plan, form)
      : plan.pattern.kind === "fixedTimes"
        ? timesForm(plan, form)
        : windowsForm(plan, form);
  const save = element("button", { type: "submit", textContent: message("saveTimes") });
  const reset = element("button", { type: "button", className: "secondary", textContent: message(byWhom("reset")) });
  reset.dataset.action = "reset";
  form.append(element("div", { className: "actions" }, [save, reset]));
  const send = async (body, done) => {
    clearErrors(form);
    const result = await api("PUT", "/me/plan-adjustments", body);
    if (!result.ok) return showProblem(form, result.data);
    await reload();
    announce(message(done));
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    await send({ planId: plan.planId, adjustment: read() }, "timesSaved");
  });
  reset.addEventListener("click", () => send({ planId: plan.planId }, byWhom("resetDone")));
  card.append(form);
  return card;
}

export async function run() {
  const status = document.getElementById("schedule-status");
  const announce = (text) => {
    status.textContent = text;
    status.hidden = false;
    status.focus();
  };

  const onDemand = await apiList("/me/on-demand-prompts");
  if (onDemand.ok) {
    const list = document.getElementById("on-demand-list");
    document.getElementById("on-demand-empty").hidden = onDemand.data.length > 0;
    for (const plan of onDemand.data) {
      const button = element("button", { type: "button", textContent: `${message("start")}: ${plan.title}` });
      button.dataset.plan = plan.planId;
      button.addEventListener("click", async () => {
        button.disabled = true;
        const result = await api("POST", "/me/on-demand-prompts", { planId: plan.planId });
        button.disabled = false;
        if (result.ok) location.assign(`/app/questionnaires/${result.data.id}`);
        else announce((result.data && result.data.detail) || message("network"));
      });
      const hint = element("span", { className: "hint", textContent: message("openFor", { minutes: plan.durationMinutes }) });
      list.append(element("li", {}, [button, hint]));
    }
  }

  const render = async () => {
    const adjustable = await apiList("/me/plan-adjustments");
    if (!adjustable.ok) return;
    const list = document.getElementById("adjust-list");
    list.replaceChildren();
    document.getElementById("adjust-empty").hidden = adjustable.data.length > 0;
    for (const plan of adjustable.data) list.append(planCard(plan, announce, render));
  };
  await render();
}
