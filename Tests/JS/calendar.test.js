// The appointment calendar's date arithmetic: `node --test Tests/JS/`.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const source = fs.readFileSync(path.join(__dirname, "..", "..", "Public/js/lib/calendar.js"), "utf8");
const loaded = import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

test("wall-clock times convert to instants and back in the person's zone", async () => {
  const calendar = await loaded;
  assert.equal(calendar.fromZoned("2026-07-01", "10:00", "Europe/Vienna"), "2026-07-01T08:00:00.000Z");
  assert.equal(calendar.fromZoned("2026-12-01", "10:00", "Europe/Vienna"), "2026-12-01T09:00:00.000Z");
  assert.equal(calendar.fromZoned("2026-12-01", "10:00", "America/New_York"), "2026-12-01T15:00:00.000Z");
  assert.deepEqual(calendar.toZoned("2026-12-01T15:00:00Z", "America/New_York"), { date: "2026-12-01", time: "10:00" });
  assert.deepEqual(calendar.toZoned("2026-12-31T23:30:00Z", "Europe/Vienna"), { date: "2027-01-01", time: "00:30" });
});

test("a skipped time moves forward by the gap; a repeated one takes its first occurrence", async () => {
  const calendar = await loaded;
  assert.equal(calendar.fromZoned("2026-03-29", "02:30", "Europe/Vienna"), "2026-03-29T01:30:00.000Z");
  assert.deepEqual(calendar.toZoned("2026-03-29T01:30:00Z", "Europe/Vienna"), { date: "2026-03-29", time: "03:30" });
  assert.equal(calendar.fromZoned("2026-10-25", "02:30", "Europe/Vienna"), "2026-10-25T00:30:00.000Z");
  // Lord Howe Island moves its clocks by half an hour.
  assert.equal(calendar.fromZoned("2026-10-04", "02:15", "Australia/Lord_Howe"), "2026-10-03T15:45:00.000Z");
  assert.deepEqual(calendar.toZoned("2026-10-03T15:45:00Z", "Australia/Lord_Howe"), { date: "2026-10-04", time: "02:45" });
  assert.equal(calendar.fromZoned("2026-04-05", "01:45", "Australia/Lord_Howe"), "2026-04-04T14:45:00.000Z");
});

test("appointments sit on a five-minute grid", async () => {
  const calendar = await loaded;
  for (const time of ["00:00", "09:05", "23:55"]) assert.ok(calendar.onGrid(time), time);
  for (const time of ["09:03", "24:00", "9:05", "", undefined, "09:60"]) assert.ok(!calendar.onGrid(time), String(time));
  assert.equal(calendar.minutesBetween("09:00", "09:50"), 50);
  assert.equal(calendar.minutesBetween("10:00", "09:55"), -5);
});

test("the month grid starts on Monday and covers whole weeks", async () => {
  const calendar = await loaded;
  const february = calendar.monthGrid("2027-02");
  assert.equal(february.length, 4);
  assert.equal(february[0][0].date, "2027-02-01");
  const november = calendar.monthGrid("2026-11");
  assert.equal(november[0][0].date, "2026-10-26");
  assert.equal(november[0][6].date, "2026-11-01");
  assert.equal(november.at(-1).at(-1).date, "2026-12-06");
  assert.ok(november.every((week) => week.length === 7));
  assert.equal(november.flat().filter((day) => day.inMonth).length, 30);
  assert.equal(calendar.addMonths("2026-12", 1), "2027-01");
  assert.equal(calendar.addMonths("2027-01", -1), "2026-12");
});

test("a near moment is said as people say it: the time today, the weekday this week, the date later", async () => {
  const calendar = await loaded;
  const now = "2026-12-02T09:00:00Z"; // a Wednesday, 10:00 in Vienna
  const zone = "Europe/Vienna";
  assert.equal(calendar.nearMoment("2026-12-02T19:00:00Z", zone, "en", now), "20:00");
  assert.equal(calendar.nearMoment("2026-12-04T08:00:00Z", zone, "en", now), "Friday 09:00");
  assert.equal(calendar.nearMoment("2026-12-04T08:00:00Z", zone, "de", now), "Freitag, 09:00");
  assert.equal(calendar.nearMoment("2026-12-12T08:00:00Z", zone, "en", now), "12 December at 09:00");
  assert.equal(calendar.nearMoment("2026-12-12T08:00:00Z", zone, "de", now), "12. Dezember um 09:00");
  // 23:30 UTC is already the next day in Vienna.
  assert.equal(calendar.nearMoment("2026-12-02T23:30:00Z", zone, "en", now), "Thursday 00:30");
  assert.equal(calendar.daysBetween("2026-12-31", "2027-01-01"), 1);
});
