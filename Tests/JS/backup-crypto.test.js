// The patient app's backup sealing against the shared vector (which the Swift SDK's tests open too):
// `node --test Tests/JS/`.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..", "..");
const vector = JSON.parse(fs.readFileSync(path.join(root, "Tests/Vectors/intervention-backup.json"), "utf8"));
const source = fs.readFileSync(path.join(root, "Public/js/lib/backup-crypto.js"), "utf8");
const loaded = import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);
const bytes = (base64) => Uint8Array.from(Buffer.from(base64, "base64"));

test("the vector opens with its passphrase and seals to the same bytes again", async () => {
  const backup = await loaded;
  assert.deepEqual(await backup.open(vector.envelope, vector.passphrase), vector.data);
  const again = await backup.seal(vector.data, vector.passphrase, {
    salt: bytes(vector.envelope.salt),
    nonce: bytes(vector.envelope.nonce),
  });
  assert.deepEqual(again, vector.envelope);
});

test("a wrong passphrase or a changed byte opens nothing", async () => {
  const backup = await loaded;
  await assert.rejects(backup.open(vector.envelope, "correct horse battery stapler"));
  const tampered = Buffer.from(vector.envelope.ciphertext, "base64");
  tampered[3] ^= 1;
  await assert.rejects(backup.open({ ...vector.envelope, ciphertext: tampered.toString("base64") }, vector.passphrase));
  await assert.rejects(backup.open({ ...vector.envelope, algorithm: "none" }, vector.passphrase));
});

test("each sealing draws a fresh salt and nonce and keeps at least 600 000 iterations", async () => {
  const backup = await loaded;
  const first = await backup.seal({ a: 1 }, "pass phrase");
  const second = await backup.seal({ a: 1 }, "pass phrase");
  assert.notEqual(first.salt, second.salt);
  assert.notEqual(first.nonce, second.nonce);
  assert.notEqual(first.ciphertext, second.ciphertext);
  assert.ok(first.iterations >= 600000);
  assert.equal(Buffer.from(first.salt, "base64").length, 16);
  assert.equal(Buffer.from(first.nonce, "base64").length, 12);
  assert.ok(!Buffer.from(first.ciphertext, "base64").toString("utf8").includes("\"a\""));
  assert.deepEqual(await backup.open(second, "pass phrase"), { a: 1 });
});
