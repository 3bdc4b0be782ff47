// A release's packages as npm installs them: the binary in a platform package
// (mediagen-mock-linux-x64-gnu), found by findBinary() and run by the
// `mediagen-mock` launcher; without it, the first call names it; the packages
// scripts/dist.js makes run nothing at install time.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { findBinary } from "../index.js";
import { platformPackage } from "../platform.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const binary = findBinary();
const version = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8")).version;

/** A project folder with node_modules/mediagen-mock as npm lays it out, and the platform package when asked. */
function project(t, { withPlatform }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mediagen-mock-platform-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const main = path.join(dir, "node_modules", "mediagen-mock");
  fs.mkdirSync(main, { recursive: true });
  for (const file of fs.readdirSync(packageDir).filter((f) => f.endsWith(".js") || f === "package.json")) {
    fs.copyFileSync(path.join(packageDir, file), path.join(main, file));
  }
  const bin = path.join(dir, "node_modules", ".bin");
  fs.mkdirSync(bin);
  fs.symlinkSync(path.join(main, "launcher.js"), path.join(bin, "mediagen-mock"));
  if (withPlatform) {
    const platform = path.join(dir, "node_modules", platformPackage());
    fs.mkdirSync(path.join(platform, "bin"), { recursive: true });
    fs.writeFileSync(path.join(platform, "package.json"), JSON.stringify({ name: platformPackage(), version }));
    fs.copyFileSync(binary, path.join(platform, "bin", "mediagen-mock"));
    fs.chmodSync(path.join(platform, "bin", "mediagen-mock"), 0o755);
  }
  return dir;
}

/** Runs `mediagen-mock ARGS` as npx would: node_modules/.bin first on PATH, no MEDIAGEN_MOCK_BIN. */
function launch(dir, args) {
  const env = { ...process.env, PATH: `${path.join(dir, "node_modules", ".bin")}:${path.dirname(process.execPath)}:/usr/bin:/bin` };
  delete env.MEDIAGEN_MOCK_BIN;
  delete env.NODE_TEST_CONTEXT;
  return spawnSync(path.join(dir, "node_modules", ".bin", "mediagen-mock"), args, { cwd: dir, env, encoding: "utf8", timeout: 20_000 });
}

test("the platform package's binary is found and run by the launcher, its exit code passed on", (t) => {
  const dir = project(t, { withPlatform: true });
  const ran = launch(dir, ["--version"]);
  assert.equal(ran.status, 0, ran.stderr);
  assert.equal(ran.stdout.trim(), `mediagen-mock ${version}`);
  const found = spawnSync(process.execPath, ["--input-type=module", "-e", 'import("mediagen-mock").then((m) => console.log(m.findBinary({})))'], { cwd: dir, encoding: "utf8" });
  assert.equal(found.stdout.trim(), path.join(dir, "node_modules", platformPackage(), "bin", "mediagen-mock"), found.stderr);
  // A usage error of the binary is the launcher's exit code too.
  assert.equal(launch(dir, ["--no-such-flag"]).status, 2);
});

test("without the platform package, the launcher names it and the fixes, and never runs itself", (t) => {
  // node_modules/.bin/mediagen-mock on PATH is the launcher: taking it for the
  // binary would start launchers without end.
  const dir = project(t, { withPlatform: false });
  const ran = launch(dir, ["--version"]);
  assert.equal(ran.status, 1, ran.stdout);
  assert.match(ran.stderr, new RegExp(`the package ${platformPackage()} is not installed`));
  assert.match(ran.stderr, /--omit=optional/);
  assert.match(ran.stderr, /MEDIAGEN_MOCK_BIN/);
  assert.match(ran.stderr, /cargo build --release -p mediagen-mock-server/);
});

test("the release's packages: nothing runs at install, the platform package is optional and constrained", (t) => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "mediagen-mock-dist-"));
  t.after(() => fs.rmSync(out, { recursive: true, force: true }));
  execFileSync(process.execPath, [path.join(packageDir, "scripts", "dist.js"), "--binary", binary, "--out", out], { stdio: "ignore" });
  const manifest = (tarball) => JSON.parse(execFileSync("tar", ["-xzOf", path.join(out, tarball), "package/package.json"], { encoding: "utf8" }));
  const main = manifest(`mediagen-mock-${version}.tgz`);
  assert.equal(main.scripts, undefined);
  assert.deepEqual(main.optionalDependencies, { "mediagen-mock-linux-x64-gnu": version });
  assert.equal(main.bin["mediagen-mock"], "launcher.js");
  const listed = execFileSync("tar", ["-tzf", path.join(out, `mediagen-mock-${version}.tgz`)], { encoding: "utf8" });
  assert.doesNotMatch(listed, /bin\/mediagen-mock|scripts\/binary\.js/);
  const platform = manifest(`mediagen-mock-linux-x64-gnu-${version}.tgz`);
  assert.deepEqual([platform.os, platform.cpu, platform.libc], [["linux"], ["x64"], ["glibc"]]);
  assert.equal(platform.scripts, undefined);
});
