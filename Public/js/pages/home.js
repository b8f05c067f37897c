// The home: the person's day. What is due now and until when, what opens next, the next session, what arrived
// unseen with its first line, and how the week goes — all from one read of /me/today; the full lists stay on
// their pages.

import { api, keepForOffline } from "../lib/api.js";
import { nearMoment, toZoned } from "../lib/calendar.js";
import { countMessage, locale, message } from "../lib/i18n.js";
import { setText } from "../lib/page.js";
import { session } from "../lib/storage.js";

const language = () => document.documentElement.lang || "en";

function tile(href, title, detail, className) {
  const item = document.createElement("li");
  const link = document.createElement(href ? "a" : "div");
  if (href) link.href = href;
  if (className) link.className = className;
  const heading = document.createElement("span");
  heading.textContent = title;
  link.append(heading);
  if (detail) {
    const line = document.createElement("span");
    line.className = "hint tile-detail";
    line.textContent = detail;
    link.append(line);
  }
  item.append(link);
  return item;
}

function showDue(today, zone) {
  const list = document.getElementById("due-list");
  list.replaceChildren(
    ...today.due.map((prompt) => {
      const until = message("until", { when: nearMoment(prompt.closesAt, zone, language()) });
      return prompt.blocked
        ? tile(null, prompt.title, `${until} · ${message("waits")}`, "blocked")
        : tile(`/app/questionnaires/${prompt.id}`, prompt.title, until);
    }),
  );
  document.getElementById("due-none").hidden = today.due.length > 0;
  const more = document.getElementById("due-more");
  more.hidden = !today.dueCount;
  if (today.dueCount) more.querySelector("a").textContent = countMessage("allDue", today.dueCount);
  const next = document.getElementById("due-next");
  next.hidden = !today.next;
  if (today.next) {
    next.textContent = message("next", { title: today.next.title, when: nearMoment(today.next.opensAt, zone, language()) });
  }
}

function showAppointment(appointment, zone) {
  document.getElementById("appointment-section").hidden = !appointment;
  if (!appointment) return;
  const minutes = Math.round((new Date(appointment.endsAt) - new Date(appointment.startsAt)) / 60000);
  const when = message("sessionWhen", { when: nearMoment(appointment.startsAt, zone, language()), minutes });
  const link = document.getElementById("appointment-link");
  const title = document.createElement("span");
  title.textContent = appointment.title;
  const detail = document.createElement("span");
  detail.className = "hint tile-detail";
  detail.textContent = when;
  link.replaceChildren(title, detail);
}

function showMessages(today) {
  document.getElementById("messages-section").hidden = today.messages.length === 0;
  const list = document.getElementById("message-list");
  list.replaceChildren(
    ...today.messages.map((item) => {
      const entry = tile(`/app/interventions/${item.id}`, item.firstLine);
      const label = document.createElement("span");
      label.className = "new";
      label.textContent = message("new");
      entry.firstChild.prepend(label);
      return entry;
    }),
  );
  const rest = today.unseenMessages - today.messages.length;
  const all = document.getElementById("messages-all");
  all.textContent = rest > 0 ? `${all.textContent} (${countMessage("moreMessages", rest)})` : all.textContent;
}

function showWeek(week, zone) {
  const planned = week.reduce((sum, day) => sum + day.planned, 0);
  document.getElementById("week-section").hidden = false;
  const answered = week.reduce((sum, day) => sum + day.answered, 0);
  setText("week-summary", planned ? message("weekSummary", { answered, planned }) : message("weekNone"));
  const list = document.getElementById("week-list");
  list.hidden = planned === 0;
  const today = toZoned(Date.now(), zone).date;
  const short = new Intl.DateTimeFormat(locale(), { weekday: "short", timeZone: "UTC" });
  const long = new Intl.DateTimeFormat(locale(), { weekday: "long", timeZone: "UTC" });
  list.replaceChildren(
    ...week.map((day) => {
      const date = new Date(`${day.date}T12:00:00Z`);
      const item = document.createElement("li");
      if (day.date === today) {
        item.className = "today";
        item.setAttribute("aria-current", "date");
      }
      const said = day.planned
        ? message("dayProgress", { day: long.format(date), answered: day.answered, planned: day.planned })
        : message("dayNone", { day: long.format(date) });
      const hidden = document.createElement("span");
      hidden.className = "visually-hidden";
      hidden.textContent = said;
      const name = document.createElement("span");
      name.setAttribute("aria-hidden", "true");
      name.textContent = short.format(date);
      const bar = document.createElement("span");
      bar.className = "bar";
      bar.setAttribute("aria-hidden", "true");
      const fill = document.createElement("span");
      fill.style.height = `${day.planned ? Math.round((day.answered / day.planned) * 100) : 0}%`;
      bar.append(fill);
      const count = document.createElement("span");
      count.setAttribute("aria-hidden", "true");
      count.textContent = day.planned ? `${day.answered}/${day.planned}` : "–";
      item.append(hidden, name, bar, count);
      return item;
    }),
  );
}

/** What the "more" tiles offer follows the person's situation and the records their studies collect. */
function showTiles(today) {
  const me = today.me;
  setText("greeting", me.name ? `${message("greeting")} ${me.name}` : message("greeting"));
  document.getElementById("pairing-hint").hidden = today.situation !== "neither";
  document.getElementById("therapist-tile").hidden = !me.patient?.paired;
  document.getElementById("appointments-tile").hidden = !me.patient?.paired;
  const collected = me.patient?.records?.collects || [];
  document.querySelectorAll("[data-record]").forEach((tile) => (tile.hidden = !collected.includes(tile.dataset.record)));
  document.getElementById("health-data-tile").hidden = !(me.patient?.records?.sampleTypes || []).length;
  const badge = (id, count) => {
    const node = document.getElementById(id);
    node.textContent = String(count);
    node.hidden = !count;
  };
  badge("open-count", today.dueCount || today.due.length);
  badge("new-interventions", today.unseenMessages);
}

export async function run() {
  if (new URLSearchParams(location.search).has("deleted")) document.getElementById("deleted-notice").hidden = false;
  if (!session.token) return;
  const result = await api("GET", "/me/today");
  if (!result.ok) return;
  const today = result.data;
  const zone = today.me.timeZone;
  showDue(today, zone);
  showAppointment(today.appointment, zone);
  showMessages(today);
  showWeek(today.week, zone);
  showTiles(today);
  keepForOffline(today.due);
}
