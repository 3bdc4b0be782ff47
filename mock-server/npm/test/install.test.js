// What `npm install` of a checkout's package runs (scripts/binary.js install)
// outside the workspace: a binary given by MEDIAGEN_MOCK_BIN is put at
// bin/mediagen-mock, where findBinary() and so the launcher look; with none,
// and no cargo workspace around, a clear error names what is missing.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { findBinary } from "../index.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

/** The package as npm unpacks it from a tarball without a binary, outside any workspace; removed after the test. */
function unpacked(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mediagen-mock-install-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "scripts"));
  for (const file of ["package.json", "scripts/binary.js"]) {
    fs.copyFileSync(path.join(packageDir, file), path.join(dir, file));
  }
  return dir;
}

function install(dir, env) {
  const clean = { ...process.env, ...env };
  delete clean.NODE_TEST_CONTEXT;
  return spawnSync(process.execPath, ["scripts/binary.js", "install"], { cwd: dir, env: clean, encoding: "utf8" });
}

test("with no binary and nothing to build it from, the install says what is missing", (t) => {
  const dir = unpacked(t);
  const run = install(dir, { MEDIAGEN_MOCK_BIN: "", PATH: path.dirname(process.execPath) });
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, /no binary packed in this package \(bin\/mediagen-mock\)/);
  assert.match(run.stderr, /no Rust workspace around this folder/);
  assert.match(run.stderr, /MEDIAGEN_MOCK_BIN is not set/);
  assert.equal(fs.existsSync(path.join(dir, "bin", "mediagen-mock")), false);
});

test("MEDIAGEN_MOCK_BIN puts a built binary in place, and a second install leaves nothing else", (t) => {
  const dir = unpacked(t);
  for (let i = 0; i < 2; i++) {
    const run = install(dir, { MEDIAGEN_MOCK_BIN: findBinary() });
    assert.equal(run.status, 0, run.stderr);
  }
  const placed = path.join(dir, "bin", "mediagen-mock");
  assert.match(spawnSync(placed, ["--version"], { encoding: "utf8" }).stdout, /^mediagen-mock \d/);
  assert.deepEqual(fs.readdirSync(path.join(dir, "bin")), ["mediagen-mock"]);
});

test("a MEDIAGEN_MOCK_BIN that does not run is refused by name", (t) => {
  const dir = unpacked(t);
  const run = install(dir, { MEDIAGEN_MOCK_BIN: path.join(dir, "package.json") });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /MEDIAGEN_MOCK_BIN=.*package\.json does not run/);
});
