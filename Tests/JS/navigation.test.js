// Where `next=` may send the browser: `node --test Tests/JS/`.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const source = fs.readFileSync(path.join(__dirname, "..", "..", "Public/js/lib/navigation.js"), "utf8");
const loaded = import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);
const origin = "https://interlude.test";

test("paths of this site are kept", async () => {
  const { safeNext } = await loaded;
  assert.equal(safeNext("/app/profile", "/app", origin), "/app/profile");
  assert.equal(safeNext("/app/questionnaires/1?x=2#top", "/app", origin), "/app/questionnaires/1?x=2#top");
  assert.equal(safeNext("/app/a%2F%2Fb", "/app", origin), "/app/a%2F%2Fb");
});

test("anything the browser would read as another site falls back", async () => {
  const { safeNext } = await loaded;
  const attacks = [
    "//evil.example", "/\t/evil.example", "/\n/evil.example", "\t//evil.example", " //evil.example",
    "/\\evil.example", "\\\\evil.example", "https://evil.example", "javascript:alert(1)", "evil.example", "",
    "/\r\n/evil.example", null, undefined,
  ];
  for (const attack of attacks) assert.equal(safeNext(attack, "/app", origin), "/app", JSON.stringify(attack));
});
