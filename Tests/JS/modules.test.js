// How the patient app's modules hang together: `node --test Tests/JS/`.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..", "..");
const scripts = path.join(root, "Public/js");

/** Every module of the app, as a path under Public/js. */
function modules() {
  const found = [];
  const walk = (directory) => {
    for (const entry of fs.readdirSync(path.join(scripts, directory), { withFileTypes: true })) {
      const name = path.posix.join(directory, entry.name);
      if (entry.isDirectory()) walk(name);
      else if (entry.name.endsWith(".js")) found.push(name);
    }
  };
  walk("");
  return found.sort();
}

/**
 * What a module imports, statically or on demand, as paths under Public/js; the entry's import of the page's
 * module (a template) is checked by the last test.
 */
function imports(module) {
  const source = fs.readFileSync(path.join(scripts, module), "utf8");
  const targets = [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)["'`](\.{1,2}\/[^"'`]+)["'`]/g)]
    .map((match) => match[1])
    .filter((target) => !target.includes("${"));
  return targets.map((target) => path.posix.normalize(path.posix.join(path.posix.dirname(module), target)));
}

// The console's scripts (the plan form, the questionnaire editor) are not part of the installable app.
const appModules = modules().filter((module) => module !== "pages/plan-form.js" && !module.startsWith("console/"));

test("every import names a module that exists", () => {
  for (const module of modules()) {
    for (const target of imports(module)) assert.ok(modules().includes(target), `${module} imports missing ${target}`);
  }
});

test("lib/ never reaches into a page or the entry; pages use lib/ only", () => {
  for (const module of modules()) {
    const targets = imports(module);
    if (module.startsWith("lib/")) assert.deepEqual(targets.filter((target) => !target.startsWith("lib/")), [], module);
    if (module.startsWith("pages/")) assert.deepEqual(targets.filter((target) => !target.startsWith("lib/")), [], module);
  }
});

test("no module imports itself through others", () => {
  const graph = new Map(modules().map((module) => [module, imports(module)]));
  const state = new Map();
  const visit = (module, trail) => {
    if (state.get(module) === "done") return;
    assert.notEqual(state.get(module), "open", `import cycle: ${[...trail, module].join(" → ")}`);
    state.set(module, "open");
    for (const target of graph.get(module) || []) visit(target, [...trail, module]);
    state.set(module, "done");
  };
  for (const module of graph.keys()) visit(module, []);
});

test("every page module is named by the entry and kept by the service worker for offline use", () => {
  const entry = fs.readFileSync(path.join(scripts, "app.js"), "utf8");
  const worker = fs.readFileSync(path.join(root, "Resources/App/service-worker.js"), "utf8");
  for (const module of appModules) {
    assert.ok(worker.includes(`"/js/${module}"`), `the service worker does not keep ${module}`);
    if (module.startsWith("pages/")) {
      assert.ok(entry.includes(`"${path.posix.basename(module, ".js")}"`), `app.js does not name ${module}`);
      const source = fs.readFileSync(path.join(scripts, module), "utf8");
      assert.match(source, /export async function run\(\)/, `${module} has no run()`);
    }
  }
});

/** Each top-level function of a module (a declaration starting a line) with its length in lines. */
function topLevelFunctions(module) {
  const lines = fs.readFileSync(path.join(scripts, module), "utf8").split("\n");
  const found = [];
  let open = null;
  lines.forEach((line, index) => {
    const start = /^(?:export )?(?:async )?function\*? ?([\w$]+)/.exec(line);
    if (start) open = { name: start[1], from: index };
    else if (open && line === "}") {
      found.push({ name: open.name, lines: index - open.from + 1 });
      open = null;
    }
  });
  return found;
}

test("pages are module-level functions of fewer than 80 lines each", () => {
  for (const module of modules()) {
    for (const { name, lines } of topLevelFunctions(module)) {
      assert.ok(lines < 80, `${module}: ${name} has ${lines} lines`);
    }
  }
});

test("elements are built with lib/dom.js's helper, not one of a module's own", () => {
  for (const module of modules().filter((module) => module !== "lib/dom.js")) {
    const source = fs.readFileSync(path.join(scripts, module), "utf8");
    assert.ok(!/^function (element|node|el|h)\(/m.test(source), `${module} builds elements with a helper of its own`);
  }
});

test("every module parses as the browser reads it, an ES module (no name declared twice)", () => {
  const { spawnSync } = require("node:child_process");
  for (const module of modules()) {
    const checked = spawnSync(process.execPath, ["--input-type=module", "--check"], {
      input: fs.readFileSync(path.join(scripts, module)),
    });
    assert.equal(checked.status, 0, `${module}: ${checked.stderr}`);
  }
});
