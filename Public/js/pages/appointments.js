// The appointments page: a month calendar with today and the next session, the list, the form on the
// five-minute grid, and the private calendar address for the phone's own calendar.

import { api, apiList } from "../lib/api.js";
import { addMonths, fromZoned, minutesBetween, onGrid, toZoned } from "../lib/calendar.js";
import {
  clearErrors,
  markField,
  onSubmit,
  requireFields,
  showProblem,
  showEditing,
  showSummary,
  values,
} from "../lib/forms.js";
import { locale, message } from "../lib/i18n.js";
import { drawMonth } from "../lib/month-view.js";
import { enqueue, pending } from "../lib/outbox.js";
import { uuid } from "../lib/storage.js";

/** What the page works on, set once by `run`. */
let zone;
let deviceZone;
let form;
let state;
let dateTimeFormat;
let feed;

const today = () => toZoned(Date.now(), zone).date;

function announce(text) {
  const status = document.getElementById("appointments-status");
  status.textContent = text;
  status.hidden = false;
  status.focus();
}

async function load() {
  const showPast = document.getElementById("show-past").checked;
  const result = await apiList(`/me/appointments${showPast ? "?includePast=true" : ""}`);
  if (!result.ok) return;
  state.appointments = result.data;
  await overlayWaitingChanges();
  renderList();
  renderMonth();
}

/** Changes made without a connection show as they will be once sent. */
async function overlayWaitingChanges() {
  if (!("indexedDB" in window)) return;
  for (const change of await pending()) {
    const index = state.appointments.findIndex((item) => item.id === change.appointmentId);
    if (change.type === "appointment.create" && index < 0) {
      state.appointments.push({ id: change.appointmentId, ...change.appointment, version: 1, timeZone: zone, pending: true });
    } else if (change.type === "appointment.update" && index >= 0) {
      Object.assign(state.appointments[index], change.appointment, { pending: true });
    } else if (change.type === "appointment.delete" && index >= 0) {
      state.appointments.splice(index, 1);
    }
  }
  state.appointments.sort((a, b) => a.startsAt.localeCompare(b.startsAt));
}

/** Without a connection the change waits on the device, under its own id, and goes out when it returns. */
/** Keeps a change for later; a new appointment keeps the id its first attempt was sent with. */
async function queue(type, appointment, body, id) {
  const mutation = { id: uuid(), type, appointmentId: appointment ? appointment.id : id };
  if (appointment) mutation.baseVersion = appointment.version;
  if (body) mutation.appointment = body;
  await enqueue(mutation, body ? body.title : appointment.title);
  await overlayWaitingChanges();
  renderList();
  renderMonth();
  announce(message("queuedChange"));
}

function timeRange(appointment) {
  const start = toZoned(appointment.startsAt, zone);
  const end = toZoned(appointment.endsAt, zone);
  const day = new Intl.DateTimeFormat(locale(), { dateStyle: "full", timeZone: "UTC" }).format(
    new Date(`${start.date}T12:00:00Z`),
  );
  return `${day}, ${start.time}–${end.time}`;
}

const nextAppointment = () => state.appointments.find((appointment) => new Date(appointment.endsAt) > new Date());

function renderList() {
  const list = document.getElementById("appointments-list");
  list.replaceChildren();
  document.getElementById("appointments-empty").hidden = state.appointments.length > 0;
  const next = nextAppointment();
  for (const appointment of state.appointments) {
    const item = document.createElement("li");
    item.className = "appointment card";
    item.dataset.id = appointment.id;
    if (next && appointment.id === next.id) item.classList.add("next");
    if (new Date(appointment.endsAt) <= new Date()) item.classList.add("past");
    const title = document.createElement("h3");
    title.textContent = appointment.title;
    if (appointment.pending) {
      const badge = document.createElement("span");
      badge.className = "badge requested";
      badge.textContent = message("pendingChange");
      title.append(" ", badge);
    }
    const when = document.createElement("p");
    when.className = "when";
    when.textContent = timeRange(appointment);
    item.append(title, when);
    if (appointment.comment) {
      const comment = document.createElement("p");
      comment.className = "hint";
      comment.textContent = appointment.comment;
      item.append(comment);
    }
    if (appointment.bookedBy === "therapist") {
      // The therapist's session: theirs to move or cancel, the patient asks.
      const booked = document.createElement("p");
      booked.className = "hint booked-by-therapist";
      booked.textContent = message("byTherapist");
      item.append(booked);
      if (new Date(appointment.endsAt) > new Date()) item.append(requestPart(appointment));
      list.append(item);
      continue;
    }
    const actions = document.createElement("div");
    actions.className = "actions";
    const edit = document.createElement("button");
    edit.type = "button";
    edit.className = "secondary";
    edit.dataset.action = "edit";
    edit.textContent = message("edit");
    edit.addEventListener("click", () => startEditing(appointment));
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "secondary danger";
    remove.dataset.action = "delete";
    remove.textContent = message("delete");
    remove.addEventListener("click", async () => {
      if (!confirm(message("confirmDelete"))) return;
      const result = await api("DELETE", `/me/appointments/${appointment.id}`);
      if (result.status === 0) {
        if (state.editing === appointment.id) stopEditing();
        return queue("appointment.delete", appointment);
      }
      if (result.ok) {
        if (state.editing === appointment.id) stopEditing();
        announce(message("appointmentDeleted"));
        await load();
      }
    });
    actions.append(edit, remove);
    item.append(actions);
    list.append(item);
  }
  const nextText = document.getElementById("next-appointment");
  nextText.textContent = next
    ? message("next", { when: dateTimeFormat.format(new Date(next.startsAt)), title: next.title })
    : message("noNext");
}

/** What the patient asked of a therapist's session, or the way to ask. */
function requestPart(appointment) {
  const part = document.createElement("div");
  part.className = "appointment-request";
  const button = (key, action, onClick) => {
    const element = document.createElement("button");
    element.type = "button";
    element.className = "secondary";
    element.dataset.action = action;
    element.textContent = message(key);
    element.addEventListener("click", onClick);
    return element;
  };
  const request = appointment.request;
  if (request) {
    const status = document.createElement("p");
    status.className = "notice warn";
    status.textContent =
      request.kind === "move" ? message("askedMove", { when: timeRange(request) }) : message("askedCancel");
    part.append(
      status,
      button("withdrawRequest", "withdraw-request", async () => {
        const result = await api("DELETE", `/me/appointments/${appointment.id}/request`);
        if (result.status === 0) return announce(message("requestOffline"));
        if (result.ok || result.status === 409) {
          await load();
          if (result.ok) announce(message("requestWithdrawn"));
        }
      }),
    );
    return part;
  }
  const open = button("askChange", "ask-change", () => {
    open.hidden = true;
    part.append(requestForm(appointment, () => {
      part.querySelector("form").remove();
      open.hidden = false;
      open.focus();
    }));
    part.querySelector("input").focus();
  });
  part.append(open);
  return part;
}

/** A request to move the session (to a time on the five-minute grid) or to cancel it, with a note. */
function requestForm(appointment, close) {
  const requestForm = document.getElementById("request-form").content.firstElementChild.cloneNode(true);
  // Each list item has its own copy: ids made unique, labels kept pointing at their fields.
  for (const element of requestForm.querySelectorAll("[id]")) element.id = `${element.id}-${appointment.id}`;
  for (const label of requestForm.querySelectorAll("label[for]")) label.htmlFor = `${label.htmlFor}-${appointment.id}`;
  const note = requestForm.querySelector("textarea");
  note.setAttribute("aria-describedby", `${note.getAttribute("aria-describedby")}-${appointment.id}`);
  const start = toZoned(appointment.startsAt, zone);
  requestForm.elements.date.value = start.date;
  requestForm.elements.startTime.value = start.time;
  requestForm.elements.endTime.value = toZoned(appointment.endsAt, zone).time;
  const moveFields = requestForm.querySelector("[data-move-fields]");
  for (const choice of requestForm.elements.kind) {
    choice.addEventListener("change", () => {
      moveFields.hidden = requestForm.elements.kind.value !== "move";
    });
  }
  requestForm.querySelector('[data-action="close-request"]').addEventListener("click", close);
  requestForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(requestForm);
    const data = values(requestForm);
    const body = { kind: requestForm.elements.kind.value };
    if (body.kind === "move") {
      if (!check(requestForm, data, ["date", "startTime", "endTime"])) return showSummary(requestForm, message("fixErrors"));
      body.startsAt = fromZoned(data.date, data.startTime, zone);
      body.endsAt = fromZoned(data.date, data.endTime, zone);
    }
    if (data.note.trim()) body.note = data.note.trim();
    const result = await api("PUT", `/me/appointments/${appointment.id}/request`, body);
    if (result.status === 0) return showSummary(requestForm, message("requestOffline"));
    if (!result.ok) return showProblem(requestForm, result.data);
    await load();
    announce(message("requestSent"));
  });
  return requestForm;
}

function renderMonth() {
  const byDay = new Map();
  for (const appointment of state.appointments) {
    const day = toZoned(appointment.startsAt, zone).date;
    byDay.set(day, [...(byDay.get(day) || []), appointment.title]);
  }
  const next = nextAppointment();
  drawMonth({
    month: state.month,
    today: today(),
    byDay,
    describe: (titles) => message("appointmentsOn", { titles: titles.join(", ") }),
    markClass: "has-appointment",
    highlight: next ? toZoned(next.startsAt, zone).date : null,
  });
}

function startEditing(appointment) {
  state.editing = appointment.id;
  const start = toZoned(appointment.startsAt, zone);
  form.elements.title.value = appointment.title;
  form.elements.date.value = start.date;
  form.elements.startTime.value = start.time;
  form.elements.endTime.value = toZoned(appointment.endsAt, zone).time;
  form.elements.comment.value = appointment.comment || "";
  showEditing(form, true);
  form.elements.title.focus();
}

function stopEditing() {
  state.editing = null;
  showEditing(form, false);
}

/** The checks the server makes too, answered at once: required, the five-minute grid, end after start. */
function check(target, data, required) {
  let valid = requireFields(target, required);
  const refuse = (field, key) => {
    markField(target, field, message(key));
    valid = false;
  };
  if (data.startTime && !onGrid(data.startTime)) refuse("startsAt", "offGrid");
  if (data.endTime && !onGrid(data.endTime)) refuse("endsAt", "offGrid");
  if (valid && minutesBetween(data.startTime, data.endTime) <= 0) refuse("endsAt", "endBeforeStart");
  return valid;
}

async function submit() {
  const data = values(form);
  if (!check(form, data, ["title", "date", "startTime", "endTime"])) return showSummary(form, message("fixErrors"));
  const body = {
    title: data.title.trim(),
    startsAt: fromZoned(data.date, data.startTime, zone),
    endsAt: fromZoned(data.date, data.endTime, zone),
  };
  if (data.comment.trim()) body.comment = data.comment.trim();
  const editing = state.appointments.find((item) => item.id === state.editing);
  // A new appointment carries its id, so sending it again makes nothing new; a change names the version it is based on.
  const id = editing ? editing.id : uuid();
  const result = editing
    ? await api("PATCH", `/me/appointments/${editing.id}`, { ...body, baseVersion: editing.version })
    : await api("POST", "/me/appointments", { ...body, id });
  if (result.status === 0) {
    stopEditing();
    return queue(editing ? "appointment.update" : "appointment.create", editing, body, id);
  }
  if (!result.ok) {
    showProblem(form, result.data);
    // Changed elsewhere meanwhile: show it as it is now.
    if (result.status === 409) await load();
    return;
  }
  stopEditing();
  state.month = toZoned(result.data.startsAt, zone).date.slice(0, 7);
  await load();
  announce(message("appointmentSaved"));
}

export async function run() {
  const me = await api("GET", "/me");
  if (!me.ok) return;
  zone = me.data.timeZone;
  deviceZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone !== deviceZone) {
    const note = document.getElementById("appointments-zone");
    note.textContent = message("zone", { zone });
    note.hidden = false;
  }
  form = document.querySelector('form[data-form="appointment"]');
  state = { appointments: [], month: toZoned(Date.now(), zone).date.slice(0, 7), editing: null };
  dateTimeFormat = new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeStyle: "short", timeZone: zone });

  onSubmit("appointment", submit);
  form.querySelector('[data-action="cancel-edit"]').addEventListener("click", stopEditing);
  document.getElementById("show-past").addEventListener("change", load);
  document.querySelector('[data-action="previous-month"]').addEventListener("click", () => {
    state.month = addMonths(state.month, -1);
    renderMonth();
  });
  document.querySelector('[data-action="next-month"]').addEventListener("click", () => {
    state.month = addMonths(state.month, 1);
    renderMonth();
  });
  document.querySelector('[data-action="today"]').addEventListener("click", () => {
    state.month = today().slice(0, 7);
    renderMonth();
  });

  feed = document.getElementById("feed");
  document.querySelector('[data-action="show-feed"]').addEventListener("click", async () => {
    const result = await api("GET", "/me/calendar-feed");
    if (!result.ok) return;
    document.getElementById("feed-url").value = result.data.url;
    document.getElementById("feed-subscribe").href = result.data.url.replace(/^https?:/, "webcal:");
    feed.hidden = false;
  });
  document.querySelector('[data-action="revoke-feed"]').addEventListener("click", async () => {
    if (!confirm(message("confirmRevoke"))) return;
    const result = await api("DELETE", "/me/calendar-feed");
    if (!result.ok) return;
    feed.hidden = true;
    document.getElementById("feed-url").value = "";
    announce(message("feedRevoked"));
  });

  // Once waiting changes are sent, show the server's state again.
  window.addEventListener("interlude:outbox", () => navigator.onLine && load());
  await load();
}
