// scripts/dist.js, the release's two tarballs: the main package runs nothing at
// install time, names the platform package under optionalDependencies at its
// own version and carries every file its manifest points at; the platform
// package carries the binary, executable, and only installs where os, cpu and
// libc match; a binary of another version is refused; the bytes are the same
// on every run.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { packageDir, tempDir, version } from "./npm-tree.js";

const dist = path.join(packageDir, "scripts", "dist.js");
const platformName = "mediagen-mock-linux-x64-gnu";

/** A binary that answers `--version` as the given version of mediagen-mock would. */
function binaryOf(t, said) {
  const file = path.join(tempDir(t), "mediagen-mock");
  fs.writeFileSync(file, `#!/bin/sh\necho "mediagen-mock ${said}"\n`);
  fs.chmodSync(file, 0o700);
  return file;
}

function runDist(binary, out) {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return spawnSync(process.execPath, [dist, "--binary", binary, "--out", out], { env, encoding: "utf8", timeout: 120_000 });
}

/** The tarball's package.json, and its entries with their modes (`tar -tv`). */
function unpack(tarball) {
  const manifest = JSON.parse(execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }));
  const entries = new Map(
    execFileSync("tar", ["-tvzf", tarball], { encoding: "utf8" })
      .trim()
      .split("\n")
      .map((line) => line.trim().split(/\s+/))
      .map((fields) => [fields.at(-1).replace(/^package\//, ""), fields[0]]),
  );
  return { manifest, entries };
}

const INSTALL_TIME = ["preinstall", "install", "postinstall", "prepare", "prepack", "postpack"];

test("the two tarballs: nothing runs at install, the platform package is optional, constrained and executable", (t) => {
  const out = tempDir(t);
  const ran = runDist(binaryOf(t, version), out);
  assert.equal(ran.status, 0, ran.stderr);
  const mainTgz = path.join(out, `mediagen-mock-${version}.tgz`);
  const platformTgz = path.join(out, `${platformName}-${version}.tgz`);
  assert.deepEqual(ran.stdout.trim().split("\n"), [mainTgz, platformTgz]);
  assert.deepEqual(fs.readdirSync(out).toSorted(), [path.basename(mainTgz), path.basename(platformTgz)].toSorted());

  const main = unpack(mainTgz);
  for (const script of INSTALL_TIME) assert.equal(main.manifest.scripts?.[script], undefined, script);
  assert.deepEqual(main.manifest.optionalDependencies, { [platformName]: version });
  assert.equal(main.entries.has("bin/mediagen-mock"), false, "the binary is the platform package's");
  assert.equal(main.entries.has("scripts/binary.js"), false);
  // What the manifest points at is in the tarball: the command and each export.
  const pointed = [
    ...Object.values(main.manifest.bin),
    ...Object.values(main.manifest.exports).flatMap((e) => (typeof e === "string" ? [e] : Object.values(e))),
  ].map((p) => p.replace(/^\.\//, ""));
  for (const file of pointed) assert.ok(main.entries.has(file), `${file} is not in the main tarball`);
  assert.equal(main.manifest.bin["mediagen-mock"], "bin/mediagen-mock.js");
  assert.match(main.entries.get("bin/mediagen-mock.js"), /^-rwxr-xr-x/);

  const platform = unpack(platformTgz);
  assert.equal(platform.manifest.name, platformName);
  assert.equal(platform.manifest.version, version);
  assert.deepEqual(platform.manifest.os, ["linux"]);
  assert.deepEqual(platform.manifest.cpu, ["x64"]);
  assert.deepEqual(platform.manifest.libc, ["glibc"]);
  assert.equal(platform.manifest.scripts, undefined);
  assert.ok(platform.manifest.files.includes("bin/mediagen-mock"));
  assert.match(platform.entries.get("bin/mediagen-mock") ?? "", /^-rwxr-xr-x/, "the binary is executable for everyone");
  assert.ok(platform.entries.has("README.md"));
});

test("the same binary gives the same bytes", (t) => {
  const binary = binaryOf(t, version);
  const [a, b] = [tempDir(t), tempDir(t)];
  for (const out of [a, b]) assert.equal(runDist(binary, out).status, 0);
  for (const name of fs.readdirSync(a)) {
    assert.ok(fs.readFileSync(path.join(a, name)).equals(fs.readFileSync(path.join(b, name))), name);
  }
});

test("a binary of another version than package.json is refused, and nothing is written", (t) => {
  const out = tempDir(t);
  const ran = runDist(binaryOf(t, "9.9.9"), out);
  assert.equal(ran.status, 1);
  assert.match(ran.stderr, new RegExp(`says "mediagen-mock 9\\.9\\.9", package\\.json is ${version.replaceAll(".", "\\.")}`));
  assert.deepEqual(fs.readdirSync(out), []);
});
