// The noise level the patient app sends with answers, computed from microphone samples on the device:
// `node --test Tests/JS/`.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const source = fs.readFileSync(path.join(__dirname, "..", "..", "Public/js/lib/context-capture.js"), "utf8");
const loaded = import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

test("a full-scale square wave is 0 dBFS, a full-scale sine -3 dBFS, a tenth of full scale -20 dBFS", async () => {
  const { dbfs, meanSquare } = await loaded;
  assert.equal(dbfs(meanSquare([Float32Array.from([1, -1, 1, -1])])), 0);
  const sine = Float32Array.from({ length: 4800 }, (_, index) => Math.sin((2 * Math.PI * 440 * index) / 48000));
  assert.equal(dbfs(meanSquare([sine])), -3);
  assert.equal(dbfs(meanSquare([Float32Array.from([0.1, -0.1]), Float32Array.from([0.1])])), -20);
});

test("silence and no samples are the floor of -200 dBFS; nothing is ever above 0", async () => {
  const { dbfs, meanSquare } = await loaded;
  assert.equal(dbfs(meanSquare([new Float32Array(64)])), -200);
  assert.equal(dbfs(meanSquare([])), -200);
  assert.equal(dbfs(4), 0);
  assert.equal(dbfs(Number.NaN), -200);
});
