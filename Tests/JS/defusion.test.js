// The defusion exercise's arithmetic: `node --test Tests/JS/`.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const source = fs.readFileSync(path.join(__dirname, "..", "..", "Public/js/lib/defusion.js"), "utf8");
const loaded = import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

/** WCAG's contrast ratio of two #rrggbb colours. */
function contrast(a, b) {
  const luminance = (hex) => {
    const [r, g, b] = [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16) / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light + 0.05) / (dark + 0.05);
}

test("every text colour is readable on its background", async () => {
  const { PALETTE } = await loaded;
  for (const { background, inks } of PALETTE) {
    for (const ink of inks) assert.ok(contrast(background, ink) >= 4.5, `${ink} on ${background}: ${contrast(background, ink).toFixed(2)}`);
  }
});

test("buttons and keys change the words the same way, and the colours cycle through every background", async () => {
  const { applyTool, initialState, toolForKey, PALETTE, FONTS } = await loaded;
  const start = initialState(() => 0);
  assert.deepEqual(start, { x: 0, y: 0, scale: 1, rotation: 0, font: 0, palette: 0, ink: 0 });
  for (const [key, tool] of [["ArrowLeft", "left"], ["]", "turnRight"], ["+", "bigger"], ["-", "smaller"], ["f", "font"], ["C", "colour"]]) {
    assert.equal(toolForKey(key), tool);
    assert.deepEqual(applyTool(start, toolForKey(key)), applyTool(start, tool));
  }
  assert.equal(toolForKey("Enter"), null);
  assert.equal(applyTool(start, "right").x, 24);
  assert.equal(applyTool(start, "turnLeft").rotation, -15);
  let state = start;
  const seen = new Set();
  const pairs = PALETTE.reduce((sum, entry) => sum + entry.inks.length, 0);
  for (let step = 0; step < pairs; step += 1) {
    seen.add(`${state.palette}/${state.ink}`);
    state = applyTool(state, "colour");
  }
  assert.equal(seen.size, pairs);
  assert.deepEqual([state.palette, state.ink], [0, 0]);
  let font = start;
  for (let step = 0; step < FONTS.length; step += 1) font = applyTool(font, "font");
  assert.equal(font.font, 0);
});

test("two fingers resize and turn from where the gesture began; the words stay on the stage and within their sizes", async () => {
  const { pinch, clamp } = await loaded;
  const start = { x: 0, y: 0, scale: 1, rotation: 10, font: 0, palette: 0, ink: 0 };
  const spread = pinch(start, [{ x: 0, y: 0 }, { x: 100, y: 0 }], [{ x: 0, y: 0 }, { x: 200, y: 0 }]);
  assert.equal(spread.scale, 2);
  assert.equal(spread.rotation, 10);
  const turned = pinch(start, [{ x: 0, y: 0 }, { x: 100, y: 0 }], [{ x: 0, y: 0 }, { x: 0, y: 100 }]);
  assert.equal(Math.round(turned.rotation), 100);
  assert.equal(pinch(start, [{ x: 5, y: 5 }, { x: 5, y: 5 }], [{ x: 0, y: 0 }, { x: 90, y: 0 }]), start, "fingers on one spot change nothing");
  const held = clamp({ ...start, x: 900, y: -900, scale: 9, rotation: 370 }, { x: 150, y: 100 });
  assert.deepEqual([held.x, held.y, held.scale, held.rotation], [150, -100, 3, 10]);
  assert.equal(clamp({ ...start, scale: 0.01 }, { x: 1, y: 1 }).scale, 0.4);
  assert.equal(clamp({ ...start, rotation: -190 }, { x: 1, y: 1 }).rotation, 170);
});
