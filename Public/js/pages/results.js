// "My results": each score and numeric item over time as a chart with its numbers, when in the week momentary
// questionnaires were answered, and — where a study shows it — the person's mean against everyone's.

import { api, apiList } from "../lib/api.js";
import { countMessage, formatDate, formatDateTime, message } from "../lib/i18n.js";

const SVG = "http://www.w3.org/2000/svg";
const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
const PARTS = ["night", "morning", "afternoon", "evening"];

function element(tag, properties = {}, children = []) {
  const node = Object.assign(document.createElement(tag), properties);
  node.append(...children);
  return node;
}

function svg(tag, attributes = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

let chartCount = 0;

/** The moment a note pinned to a day stands for: noon of that day on this device. */
function noteTime(note) {
  return Date.parse(`${note.day}T12:00:00`);
}

/** A line over time with its dots and the notes of its days marked, described in words, and the numbers below. */
function chart(series, notes) {
  const id = `chart-${++chartCount}`;
  const values = series.points.map((point) => point.value);
  const times = series.points.map((point) => Date.parse(point.at));
  const [low, high] = [Math.min(...values), Math.max(...values)];
  const marked = notes.filter((note) => noteTime(note) >= Math.min(...times) - 43_200_000 && noteTime(note) <= Math.max(...times) + 43_200_000);
  const [first, last] = [Math.min(...times, ...marked.map(noteTime)), Math.max(...times, ...marked.map(noteTime))];
  const width = 320;
  const height = 120;
  const x = (time) => (last === first ? width / 2 : 10 + ((time - first) / (last - first)) * (width - 20));
  const y = (value) => (high === low ? height / 2 : height - 10 - ((value - low) / (high - low)) * (height - 20));
  const picture = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-labelledby": `${id}-title ${id}-desc`, class: "result-chart" });
  const title = svg("title", { id: `${id}-title` });
  title.textContent = series.title;
  const description = svg("desc", { id: `${id}-desc` });
  description.textContent = countMessage("chartDescription", values.length, {
    from: formatDate(new Date(first).toISOString()),
    to: formatDate(new Date(last).toISOString()),
    low,
    high,
    latest: values[values.length - 1],
  }) + (marked.length ? ` ${message("notesMarked", { count: marked.length })}` : "");
  picture.append(title, description);
  for (const note of marked) {
    const marker = svg("g", { class: "result-note" });
    const label = svg("title");
    label.textContent = `${formatDate(note.day)}: ${note.text}`;
    marker.append(label, svg("line", { x1: x(noteTime(note)), x2: x(noteTime(note)), y1: 4, y2: height - 4 }));
    picture.append(marker);
  }
  const path = series.points.map((point, index) => `${index ? "L" : "M"}${x(Date.parse(point.at)).toFixed(1)},${y(point.value).toFixed(1)}`);
  picture.append(svg("path", { d: path.join(" "), class: "result-line" }));
  for (const point of series.points) picture.append(svg("circle", { cx: x(Date.parse(point.at)), cy: y(point.value), r: 3, class: "result-dot" }));
  const rows = series.points.map((point) =>
    element("tr", {}, [
      element("td", { textContent: formatDateTime(point.at) }),
      element("td", { textContent: point.band ? `${point.value} · ${point.band.label}` : String(point.value) }),
    ]),
  );
  const table = element("table", {}, [
    element("thead", {}, [element("tr", {}, [element("th", { scope: "col", textContent: message("when") }), element("th", { scope: "col", textContent: message("value") })])]),
    element("tbody", {}, rows),
  ]);
  return element("figure", { className: "chart-frame" }, [
    element("figcaption", { textContent: series.title }),
    picture,
    element("p", { className: "hint", textContent: description.textContent }),
    element("details", {}, [element("summary", { textContent: message("value") }), table]),
  ]);
}

/** How many answers fell on each weekday and part of the day, in this device's time zone. */
function week(instrument) {
  const counts = WEEKDAYS.map(() => PARTS.map(() => 0));
  const seen = new Set();
  for (const series of instrument.scores.concat(instrument.items)) {
    for (const point of series.points) {
      if (seen.has(point.at)) continue;
      seen.add(point.at);
      const date = new Date(point.at);
      counts[(date.getDay() + 6) % 7][Math.floor(date.getHours() / 6)] += 1;
    }
  }
  const most = Math.max(1, ...counts.flat());
  const head = element("tr", {}, [element("td"), ...PARTS.map((part) => element("th", { scope: "col", textContent: message(`part.${part}`) }))]);
  const body = WEEKDAYS.map((weekday, row) =>
    element("tr", {}, [
      element("th", { scope: "row", textContent: message(`weekday.${weekday}`) }),
      ...counts[row].map((count) => {
        const cell = element("td", { textContent: String(count), className: "heat" });
        cell.dataset.level = String(Math.ceil((count / most) * 4));
        return cell;
      }),
    ]),
  );
  return element("table", { className: "week-heat" }, [
    element("caption", { textContent: message("weekCaption") }),
    element("thead", {}, [head]),
    element("tbody", {}, body),
  ]);
}

function instrumentCard(instrument, notes) {
  const card = element("section", { className: "card" });
  card.dataset.instrument = instrument.instrumentKey;
  const times = instrument.scores.concat(instrument.items).flatMap((series) => series.points.map((point) => point.at)).sort();
  card.append(
    element("h2", { textContent: instrument.title }),
    element("p", {
      className: "hint results-summary",
      textContent: message("summary", {
        from: times.length ? formatDate(times[0]) : "–",
        to: times.length ? formatDate(times[times.length - 1]) : "–",
        answered: instrument.answered,
        missed: instrument.missed,
      }),
    }),
  );
  for (const series of instrument.scores) card.append(chart(series, notes));
  if (instrument.items.length) {
    card.append(
      element("details", {}, [element("summary", { textContent: message("items") }), ...instrument.items.map((series) => chart(series, notes))]),
    );
  }
  if (instrument.momentary) card.append(week(instrument));
  return card;
}

/** The person's mean on a line against the middle half and median of everyone's, with the numbers in words. */
function comparisonLine(item) {
  const block = element("div", { className: "comparison" });
  block.dataset.score = `${item.instrumentKey}:${item.scoreId}`;
  block.append(element("h3", { textContent: `${item.title}: ${item.scoreTitle}` }), element("p", { className: "hint", textContent: item.studyTitle }));
  const mine = countMessage("mine", item.personCount, { mean: round(item.personMean) });
  if (item.withheld) {
    block.append(element("p", { className: "comparison-mine", textContent: mine }), element("p", { textContent: message(item.withheld) }));
    return block;
  }
  const everyone = message("everyone", {
    median: round(item.median),
    lower: round(item.lowerQuartile),
    upper: round(item.upperQuartile),
    count: item.contributors,
  });
  const low = Math.min(item.personMean, item.lowerQuartile);
  const high = Math.max(item.personMean, item.upperQuartile);
  const x = (value) => (high === low ? 150 : 10 + ((value - low) / (high - low)) * 280);
  const picture = svg("svg", { viewBox: "0 0 300 40", role: "img", "aria-label": `${mine} ${everyone}`, class: "comparison-chart" });
  picture.append(
    svg("rect", { x: x(item.lowerQuartile), y: 12, width: Math.max(2, x(item.upperQuartile) - x(item.lowerQuartile)), height: 16, class: "comparison-half" }),
    svg("line", { x1: x(item.median), x2: x(item.median), y1: 8, y2: 32, class: "comparison-median" }),
    svg("circle", { cx: x(item.personMean), cy: 20, r: 6, class: "comparison-mine-dot" }),
  );
  block.append(picture, element("p", { className: "comparison-mine", textContent: mine }), element("p", { className: "comparison-everyone", textContent: everyone }));
  return block;
}

function round(value) {
  return Math.round(value * 10) / 10;
}

async function showComparison() {
  const section = document.getElementById("comparison");
  const result = await api("GET", "/me/results/comparison");
  if (!result.ok) return;
  const { hidden, items } = result.data;
  section.hidden = !hidden && items.length === 0;
  document.getElementById("hide-comparison").checked = hidden;
  document.getElementById("comparison-list").replaceChildren(...items.map(comparisonLine));
}

export async function run() {
  const status = document.getElementById("results-status");
  const results = await api("GET", "/me/results");
  if (!results.ok) {
    status.textContent = (results.data && results.data.detail) || message("network");
    status.hidden = false;
    return;
  }
  // Notes the therapist pinned to days: marked on the charts and listed with their words.
  const notes = await apiList("/me/notes");
  const pinned = notes.ok ? notes.data : [];
  document.getElementById("notes").hidden = pinned.length === 0;
  document.getElementById("notes-list").replaceChildren(
    ...pinned.map((note) => element("li", {}, [element("time", { dateTime: note.day, textContent: formatDate(note.day) }), `: ${note.text}`])),
  );
  document.getElementById("results-empty").hidden = results.data.length > 0;
  document.getElementById("results-list").replaceChildren(...results.data.map((instrument) => instrumentCard(instrument, pinned)));
  document.getElementById("hide-comparison").addEventListener("change", async (event) => {
    await api("PATCH", "/me", { hideComparison: event.target.checked });
    await showComparison();
  });
  await showComparison();
}
