// "My results": each score and numeric item over time as a chart with its numbers, when in the week momentary
// questionnaires were answered, and — where a study shows it — the person's mean against everyone's.

import { api, apiList } from "../lib/api.js";
import { countMessage, formatDate, formatDateTime, formatNumber, message } from "../lib/i18n.js";
import { chartWidth } from "../lib/page.js";
import { element } from "../lib/dom.js";

const SVG = "http://www.w3.org/2000/svg";
const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
const PARTS = ["night", "morning", "afternoon", "evening"];

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

/** A value as the person reads it: yes or no for a yes/no question, else the number in their language. */
function valueText(series, value) {
  if (series.yesNo) return message(value >= 1 ? "yes" : "no");
  return formatNumber(value);
}

/** The values the vertical axis names: yes and no, or the bounds of the scale (else of the values) and their middle. */
function valueTicks(series, values) {
  if (series.yesNo) return [0, 1];
  let [low, high] = [series.low ?? Math.min(...values), series.high ?? Math.max(...values)];
  if (low === high) [low, high] = [low - 1, high + 1];
  return [low, (low + high) / 2, high];
}

const shortDate = (time) => formatDate(new Date(time).toISOString(), { day: "numeric", month: "short" });

/**
 * A series over time drawn `width` CSS pixels wide: dates along the bottom, the scale's values at the side, a line
 * with its dots (or, for a yes/no question, a mark on the yes or the no row), the notes of its days marked, a
 * description in words and the numbers in a table.
 */
function chart(series, notes, width) {
  const id = `chart-${++chartCount}`;
  const values = series.points.map((point) => point.value);
  const times = series.points.map((point) => Date.parse(point.at));
  const marked = notes.filter((note) => noteTime(note) >= Math.min(...times) - 43_200_000 && noteTime(note) <= Math.max(...times) + 43_200_000);
  const [first, last] = [Math.min(...times, ...marked.map(noteTime)), Math.max(...times, ...marked.map(noteTime))];
  const ticks = valueTicks(series, values);
  const [low, high] = [ticks[0], ticks[ticks.length - 1]];
  const tickTexts = ticks.map((tick) => valueText(series, tick));
  const left = 12 + 7.5 * Math.max(...tickTexts.map((text) => text.length));
  const [top, bottom, right] = [10, 34, 14];
  const height = series.yesNo ? 120 : 176;
  const x = (time) => (last === first ? (left + width - right) / 2 : left + ((time - first) / (last - first)) * (width - left - right));
  const y = (value) => height - bottom - ((value - low) / (high - low)) * (height - top - bottom);
  const picture = svg("svg", {
    viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-labelledby": `${id}-title ${id}-desc`, class: "result-chart",
  });
  const title = svg("title", { id: `${id}-title` });
  title.textContent = series.title;
  const description = svg("desc", { id: `${id}-desc` });
  const latest = valueText(series, values[values.length - 1]);
  const range = { from: formatDate(new Date(first).toISOString()), to: formatDate(new Date(last).toISOString()), latest };
  description.textContent = (series.yesNo
    ? countMessage("yesNoDescription", values.length, { ...range, yes: values.filter((value) => value >= 1).length })
    : countMessage("chartDescription", values.length, {
        ...range, low: formatNumber(Math.min(...values)), high: formatNumber(Math.max(...values)),
      })) + (marked.length ? ` ${message("notesMarked", { count: marked.length })}` : "");
  picture.append(title, description);
  ticks.forEach((tick, index) => {
    picture.append(svg("line", { x1: left, x2: width - right, y1: y(tick), y2: y(tick), class: "result-grid" }));
    const label = svg("text", { x: left - 6, y: y(tick) + 4, "text-anchor": "end", class: "result-axis" });
    label.textContent = tickTexts[index];
    picture.append(label);
  });
  const dates = last === first ? [first] : width >= 420 ? [first, (first + last) / 2, last] : [first, last];
  for (const time of dates) {
    const anchor = dates.length > 1 && time === first ? "start" : dates.length > 1 && time === last ? "end" : "middle";
    const label = svg("text", { x: x(time), y: height - 8, "text-anchor": anchor, class: "result-axis" });
    label.textContent = shortDate(time);
    picture.append(label);
  }
  for (const note of marked) {
    const marker = svg("g", { class: "result-note" });
    const label = svg("title");
    label.textContent = `${formatDate(note.day)}: ${note.text}`;
    marker.append(label, svg("line", { x1: x(noteTime(note)), x2: x(noteTime(note)), y1: top, y2: height - bottom }));
    picture.append(marker);
  }
  if (!series.yesNo) {
    const path = series.points.map((point, index) => `${index ? "L" : "M"}${x(Date.parse(point.at)).toFixed(1)},${y(point.value).toFixed(1)}`);
    picture.append(svg("path", { d: path.join(" "), class: "result-line" }));
  }
  for (const point of series.points) {
    const mark = series.yesNo ? (point.value >= 1 ? "result-yes" : "result-no") : "result-dot";
    picture.append(svg("circle", { cx: x(Date.parse(point.at)), cy: y(point.value), r: series.yesNo ? 5 : 3, class: mark }));
  }
  const rows = series.points.map((point) =>
    element("tr", {}, [
      element("td", { textContent: formatDateTime(point.at) }),
      element("td", { textContent: point.band && !series.yesNo ? `${valueText(series, point.value)} · ${point.band.label}` : valueText(series, point.value) }),
    ]),
  );
  const table = element("table", {}, [
    element("thead", {}, [element("tr", {}, [element("th", { scope: "col", textContent: message("when") }), element("th", { scope: "col", textContent: message("valueColumn") })])]),
    element("tbody", {}, rows),
  ]);
  return element("figure", { className: "chart-frame" }, [
    element("figcaption", { textContent: series.title }),
    picture,
    element("p", { className: "hint", textContent: description.textContent }),
    element("details", {}, [element("summary", { textContent: message("table") }), table]),
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

/** How many were answered and missed, and over which days. */
function answeredText(instrument, times) {
  const counts = { answered: instrument.answered, missed: instrument.missed };
  if (!times.length) return message("summaryCounts", counts);
  const [from, to] = [formatDate(times[0]), formatDate(times[times.length - 1])];
  return from === to ? message("summaryOneDay", { ...counts, day: from }) : message("summary", { ...counts, from, to });
}

/** Fills `card`, already on the page, with an instrument's charts as wide as the card shows them. */
function fillCard(card, instrument, notes) {
  const width = chartWidth(card);
  card.dataset.instrument = instrument.instrumentKey;
  const times = instrument.scores.concat(instrument.items).flatMap((series) => series.points.map((point) => point.at)).sort();
  card.append(
    element("h2", { textContent: instrument.title }),
    element("p", { className: "hint results-summary", textContent: answeredText(instrument, times) }),
  );
  for (const series of instrument.scores) card.append(chart(series, notes, width));
  if (instrument.items.length) {
    const items = instrument.items.map((series) => chart(series, notes, width));
    card.append(element("details", {}, [element("summary", { textContent: message("items") }), ...items]));
  }
  if (instrument.momentary) card.append(week(instrument));
}

/** The person's mean on a line against the middle half and median of everyone's, with the numbers in words. */
function comparisonLine(item) {
  const block = element("div", { className: "comparison" });
  block.dataset.score = `${item.instrumentKey}:${item.scoreId}`;
  block.append(element("h3", { textContent: `${item.title}: ${item.scoreTitle}` }), element("p", { className: "hint", textContent: item.studyTitle }));
  const mine = countMessage("mine", item.personCount, { mean: formatNumber(item.personMean, 1) });
  if (item.withheld) {
    block.append(element("p", { className: "comparison-mine", textContent: mine }), element("p", { textContent: message(item.withheld) }));
    return block;
  }
  const everyone = message("everyone", {
    median: formatNumber(item.median, 1),
    lower: formatNumber(item.lowerQuartile, 1),
    upper: formatNumber(item.upperQuartile, 1),
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
  const list = document.getElementById("results-list");
  list.replaceChildren();
  for (const instrument of results.data) {
    const card = list.appendChild(element("section", { className: "card" }));
    fillCard(card, instrument, pinned);
  }
  document.getElementById("hide-comparison").addEventListener("change", async (event) => {
    await api("PATCH", "/me", { hideComparison: event.target.checked });
    await showComparison();
  });
  await showComparison();
}
