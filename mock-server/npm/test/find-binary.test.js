// Which binary startMock() and the `mediagen-mock` command run, in a project
// laid out as npm installs a release: MEDIAGEN_MOCK_BIN, then this machine's
// platform package, then the package's own bin/ (a checkout's build), then
// PATH, never the launcher npm links there; with none, a message that names
// the missing platform package and how to get a binary.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { test } from "node:test";

import { PLATFORMS, RELEASED, platformPackage } from "../find-binary.js";
import { cleanEnv, fakeBinary, npmTree, pathWith, tempDir } from "./npm-tree.js";

/** findBinary() as the project's own code calls it: imported from "mediagen-mock". */
function findIn(tree, env) {
  const run = spawnSync(
    process.execPath,
    ["--input-type=module", "-e", 'import { findBinary } from "mediagen-mock"; console.log(findBinary());'],
    { cwd: tree.dir, env, encoding: "utf8", timeout: 20_000 },
  );
  return { found: run.status === 0 ? run.stdout.trim() : undefined, error: run.stderr, status: run.status };
}

test("MEDIAGEN_MOCK_BIN wins over the platform package, the checkout's build and PATH", (t) => {
  const tree = npmTree(t, { platform: true, checkout: true });
  const elsewhere = tempDir(t);
  const given = fakeBinary(path.join(elsewhere, "given", "mediagen-mock"), "given");
  fakeBinary(path.join(elsewhere, "path", "mediagen-mock"), "on PATH");
  const { found, error } = findIn(tree, cleanEnv(pathWith(path.join(elsewhere, "path")), { MEDIAGEN_MOCK_BIN: given }));
  assert.equal(found, given, error);
});

test("the platform package of this machine is found in node_modules, before the checkout's build and PATH", (t) => {
  const tree = npmTree(t, { platform: true, checkout: true });
  const other = tempDir(t);
  fakeBinary(path.join(other, "mediagen-mock"), "on PATH");
  const { found, error } = findIn(tree, cleanEnv(pathWith(other)));
  assert.equal(found, tree.platformBinary, error);
});

test("without the platform package, the checkout's build, then PATH past the launcher npm links there", (t) => {
  const withBuild = npmTree(t, { checkout: true });
  const other = tempDir(t);
  const onPath = fakeBinary(path.join(other, "mediagen-mock"), "on PATH");
  assert.equal(findIn(withBuild, cleanEnv(pathWith(withBuild.bin, other))).found, withBuild.checkoutBinary);
  // node_modules/.bin/mediagen-mock comes first on PATH under npx and npm
  // scripts; it is the launcher, and taking it for the binary would loop.
  const bare = npmTree(t);
  assert.equal(findIn(bare, cleanEnv(pathWith(bare.bin, other))).found, onPath);
});

test("with no binary, the error names this machine's platform package, why it may be missing, and the ways to a binary", (t) => {
  const tree = npmTree(t);
  const { found, error, status } = findIn(tree, cleanEnv(pathWith(tree.bin)));
  assert.equal(found, undefined);
  assert.notEqual(status, 0);
  assert.match(error, /MockStartError/);
  assert.ok(error.includes(`${platformPackage()}, the prebuilt binary for ${process.platform}-${process.arch}`), error);
  assert.match(error, /--omit=optional, --no-optional/);
  assert.match(error, /cargo build --release -p mediagen-mock-server\) and set MEDIAGEN_MOCK_BIN=/);
  assert.match(error, /npm install <checkout>\/mock-server\/npm/);
});

test("on a machine the release has no package for, the error says so and names the package that would be", (t) => {
  const tree = npmTree(t, { optionalDependencies: { "mediagen-mock-sunos-sparc": "0.0.0" } });
  const { error } = findIn(tree, cleanEnv(pathWith()));
  assert.ok(error.includes(`${platformPackage()}: there is no prebuilt package for ${process.platform}-${process.arch}`), error);
  assert.match(error, /this release has mediagen-mock-sunos-sparc/);
  assert.match(error, /MEDIAGEN_MOCK_BIN/);
});

test("each platform of the scheme is the package name the resolver asks for on that machine", () => {
  for (const [suffix, { os, cpu, libc }] of Object.entries(PLATFORMS)) {
    const asked = platformPackage({ platform: os, arch: cpu, libc: libc === "musl" ? "musl" : "gnu" });
    assert.equal(asked, `mediagen-mock-${suffix}`);
  }
  assert.equal(platformPackage({ platform: "linux", arch: "arm64", libc: "gnu" }), "mediagen-mock-linux-arm64-gnu");
  for (const released of RELEASED) assert.ok(released in PLATFORMS, released);
});
