// Runs the shared instrument vectors through the patient app's module: `node --test Tests/JS/`.
// The module is loaded from its source as an ES module, exactly as the browser loads it.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..", "..");
const vectors = JSON.parse(fs.readFileSync(path.join(root, "Tests/Vectors/instrument-logic.json"), "utf8"));
const source = fs.readFileSync(path.join(root, "Public/js/lib/instrument-logic.js"), "utf8");
const loaded = import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

for (const vector of vectors.cases) {
  test(vector.name, async () => {
    const logic = await loaded;
    const definition = vectors.definition;
    const visible = logic.visibility(definition, vector.answers);
    assert.deepEqual([...visible.sections].sort(), [...vector.visibleSections].sort());
    assert.deepEqual([...visible.items].sort(), [...vector.visibleItems].sort());
    assert.deepEqual(logic.progress(definition, vector.answers), vector.progress);
    assert.deepEqual(logic.missingRequired(definition, vector.answers), vector.missingRequired);
    const scores = logic.scores(definition, vector.answers);
    assert.deepEqual(
      scores.map((score) => ({ id: score.id, value: score.value, level: score.band ? score.band.level : null })),
      vector.scores,
    );
  });
}

test("localised texts fall back to English", async () => {
  const logic = await loaded;
  assert.equal(logic.localized({ en: "Yes", de: "Ja" }, "de"), "Ja");
  assert.equal(logic.localized({ en: "Yes" }, "de"), "Yes");
  assert.equal(logic.localized("Plain", "de"), "Plain");
});

const conditions = JSON.parse(fs.readFileSync(path.join(root, "Tests/Vectors/instrument-conditions.json"), "utf8"));
for (const vector of conditions.cases) {
  test(`conditions: ${vector.name}`, async () => {
    const logic = await loaded;
    const visible = logic.visibility(conditions.definition, vector.answers);
    assert.deepEqual([...visible.items].sort(), [...vector.visibleItems].sort());
    assert.deepEqual(logic.missingRequired(conditions.definition, vector.answers), vector.missingRequired);
  });
}
