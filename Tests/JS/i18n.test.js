// Counted texts in the page's language: `node --test Tests/JS/`.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");
const { pathToFileURL } = require("node:url");

// The page gives its texts as elements with a data-key; the module reads them once, when it loads.
const texts = {
  "waiting.one": "{count} change waits.",
  "waiting.other": "{count} changes wait.",
  "mine.one": "Your average: {mean} (1 answer).",
  "mine.other": "Your average: {mean} ({count} answers).",
  "only.other": "{count} of them",
};
globalThis.document = {
  documentElement: { lang: "en" },
  querySelectorAll: () => Object.entries(texts).map(([key, text]) => ({ dataset: { key }, textContent: text })),
};
const loaded = import(pathToFileURL(path.join(__dirname, "..", "..", "Public/js/lib/i18n.js")).href);

test("one and any other number take their own form, with the other values filled in", async () => {
  const { countMessage } = await loaded;
  document.documentElement.lang = "en";
  assert.equal(countMessage("waiting", 1), "1 change waits.");
  assert.equal(countMessage("waiting", 2), "2 changes wait.");
  assert.equal(countMessage("waiting", 0), "0 changes wait.");
  assert.equal(countMessage("mine", 1, { mean: 4.5 }), "Your average: 4.5 (1 answer).");
  assert.equal(countMessage("mine", 12, { mean: 3 }), "Your average: 3 (12 answers).");
});

test("the page's language chooses the form, and a text with one form serves every number", async () => {
  const { countMessage } = await loaded;
  document.documentElement.lang = "de";
  assert.equal(countMessage("waiting", 1), "1 change waits.");
  assert.equal(countMessage("waiting", 3), "3 changes wait.");
  // French counts zero as one: the rules are the language's, not a comparison with 1.
  document.documentElement.lang = "fr";
  assert.equal(countMessage("waiting", 0), "0 change waits.");
  assert.equal(countMessage("only", 1), "1 of them");
});

test("dates and numbers are written as the server's pages write them: day before month, a German decimal comma", async () => {
  const { formatDate, formatNumber } = await loaded;
  document.documentElement.lang = "en";
  assert.equal(formatDate("2026-12-04"), "4 December 2026");
  assert.equal(formatDate("2026-12-04", { day: "numeric", month: "short" }), "4 Dec");
  assert.equal(formatNumber(28.75), "28.75");
  assert.equal(formatNumber(28.75, 1), "28.8");
  document.documentElement.lang = "de";
  assert.equal(formatDate("2026-12-04"), "4. Dezember 2026");
  assert.equal(formatNumber(13.5), "13,5");
});
