// The month calendar the appointments and the events pages share: the month's name, the weekday names and a
// cell per day, today marked, and a dot with a title on each day that holds something.

import { monthGrid } from "./calendar.js";
import { locale, message } from "./i18n.js";

/**
 * Draws `month` ("YYYY-MM") into #month-heading, #weekday-names and #month-days. `byDay` maps a date to the
 * titles on it, `describe` turns them into the day's title, `markClass` marks such a day and `highlight` names a
 * date to mark as next.
 */
export function drawMonth({ month, today, byDay, describe, markClass, highlight = null }) {
  const [year, number] = month.split("-").map(Number);
  document.getElementById("month-heading").textContent = new Intl.DateTimeFormat(locale(), {
    month: "long",
    year: "numeric",
    timeZone: "UTC",
  }).format(new Date(Date.UTC(year, number - 1, 15)));
  const names = document.getElementById("weekday-names");
  if (!names.children.length) {
    const format = new Intl.DateTimeFormat(locale(), { weekday: "short", timeZone: "UTC" });
    for (let day = 0; day < 7; day++) {
      const cell = document.createElement("th");
      cell.scope = "col";
      cell.textContent = format.format(new Date(Date.UTC(2024, 0, 1 + day)));
      names.append(cell);
    }
  }
  const body = document.getElementById("month-days");
  body.replaceChildren();
  for (const week of monthGrid(month)) {
    const row = document.createElement("tr");
    for (const day of week) {
      const cell = document.createElement("td");
      cell.dataset.date = day.date;
      if (!day.inMonth) cell.classList.add("outside");
      const dayNumber = document.createElement("span");
      dayNumber.className = "day";
      dayNumber.textContent = String(Number(day.date.slice(8)));
      cell.append(dayNumber);
      const labels = [];
      if (day.date === today) {
        cell.classList.add("today");
        cell.setAttribute("aria-current", "date");
        labels.push(message("todayLabel"));
      }
      const titles = byDay.get(day.date) || [];
      if (titles.length) {
        cell.classList.add(markClass);
        const dot = document.createElement("span");
        dot.className = "dot";
        dot.setAttribute("aria-hidden", "true");
        cell.append(dot);
        labels.push(describe(titles));
      }
      if (day.date === highlight) cell.classList.add("next");
      if (labels.length) cell.title = labels.join(" · ");
      row.append(cell);
    }
    body.append(row);
  }
}
