// Dates and wall-clock times in a person's own time zone, and the month grid of the appointment calendar.
// Pure functions on "YYYY-MM-DD" and "HH:MM" strings, so the same code runs in the browser and under node.

const GRID_MINUTES = 5;

function pad(number) {
  return String(number).padStart(2, "0");
}

/** The local date and time of an instant in an IANA zone: { date: "YYYY-MM-DD", time: "HH:MM" }. */
export function toZoned(instant, timeZone) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    })
      .formatToParts(new Date(instant))
      .map((part) => [part.type, part.value]),
  );
  return { date: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}` };
}

function offsetMinutes(instantMs, timeZone) {
  const zoned = toZoned(instantMs, timeZone);
  const [year, month, day] = zoned.date.split("-").map(Number);
  const [hour, minute] = zoned.time.split(":").map(Number);
  const asUTC = Date.UTC(year, month - 1, day, hour, minute);
  return Math.round((asUTC - Math.floor(instantMs / 60000) * 60000) / 60000);
}

/**
 * The instant of a wall-clock time in an IANA zone, as an ISO string in UTC. A time skipped by a
 * daylight-saving change moves forward by the gap; a repeated time takes its first occurrence.
 */
export function fromZoned(date, time, timeZone) {
  const [year, month, day] = date.split("-").map(Number);
  const [hour, minute] = time.split(":").map(Number);
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  const candidates = new Set();
  for (const probe of [wall - 36 * 3600000, wall, wall + 36 * 3600000]) {
    candidates.add(wall - offsetMinutes(probe, timeZone) * 60000);
  }
  const exact = [...candidates].filter((instant) => {
    const zoned = toZoned(instant, timeZone);
    return zoned.date === date && zoned.time === time;
  });
  if (exact.length) return new Date(Math.min(...exact)).toISOString();
  // Skipped: the offset before the change puts the time after the gap.
  const before = wall - offsetMinutes(wall - 36 * 3600000, timeZone) * 60000;
  return new Date(before).toISOString();
}

/** Whether "HH:MM" lies on the five-minute grid appointments use. */
export function onGrid(time) {
  const match = /^(\d{2}):(\d{2})$/.exec(time || "");
  return Boolean(match) && Number(match[1]) < 24 && Number(match[2]) < 60 && Number(match[2]) % GRID_MINUTES === 0;
}

/** Minutes from start to end on one day, both "HH:MM". */
export function minutesBetween(start, end) {
  const [startHour, startMinute] = start.split(":").map(Number);
  const [endHour, endMinute] = end.split(":").map(Number);
  return endHour * 60 + endMinute - (startHour * 60 + startMinute);
}

/** The month after (+1) or before (-1) "YYYY-MM". */
export function addMonths(month, count) {
  const [year, number] = month.split("-").map(Number);
  const index = year * 12 + (number - 1) + count;
  return `${Math.floor(index / 12)}-${pad((index % 12) + 1)}`;
}

/**
 * The weeks of a month, Monday first, each a list of seven days { date, inMonth }; days of the neighbouring
 * months fill the first and last week.
 */
export function monthGrid(month) {
  const [year, number] = month.split("-").map(Number);
  const first = new Date(Date.UTC(year, number - 1, 1));
  const leading = (first.getUTCDay() + 6) % 7;
  const start = Date.UTC(year, number - 1, 1 - leading);
  const weeks = [];
  for (let week = 0; week < 6; week++) {
    const days = [];
    for (let weekday = 0; weekday < 7; weekday++) {
      const day = new Date(start + (week * 7 + weekday) * 86400000);
      const date = `${day.getUTCFullYear()}-${pad(day.getUTCMonth() + 1)}-${pad(day.getUTCDate())}`;
      days.push({ date, inMonth: day.getUTCMonth() === number - 1 });
    }
    if (week > 0 && !days.some((day) => day.inMonth)) break;
    weeks.push(days);
  }
  return weeks;
}

/** Whole days from one "YYYY-MM-DD" to another. */
export function daysBetween(from, to) {
  const utc = (date) => Date.UTC(...date.split("-").map((part, index) => Number(part) - (index === 1 ? 1 : 0)));
  return Math.round((utc(to) - utc(from)) / 86400000);
}

/** The locale the server's pages write dates and numbers in for `language`: day before month, a 24-hour clock. */
export function localeOf(language) {
  return language === "de" ? "de-AT" : "en-GB";
}

/**
 * A moment as people say it when it is near, in the person's zone and language: the time alone today ("20:00"),
 * the weekday and time within the week ("Friday 09:00"), else the date and time ("12 December at 09:00"),
 * in the day-month order and 24-hour clock the server's pages use.
 */
export function nearMoment(instant, timeZone, language, now = Date.now()) {
  const days = daysBetween(toZoned(now, timeZone).date, toZoned(instant, timeZone).date);
  const options = { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
  if (days !== 0) Object.assign(options, days >= 1 && days <= 6 ? { weekday: "long" } : { day: "numeric", month: "long" });
  return new Intl.DateTimeFormat(localeOf(language), options).format(new Date(instant));
}
