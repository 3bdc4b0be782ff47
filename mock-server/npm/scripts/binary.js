// Puts the `mediagen-mock` binary at bin/mediagen-mock, where findBinary()
// and so the `mediagen-mock` command (bin/mediagen-mock.js, the launcher npm
// links) look for it, for an install from a checkout. A release's packages
// run none of this: the binary comes in a platform package (scripts/dist.js).
//
//   node scripts/binary.js install   (preinstall)
//   node scripts/binary.js pack      (prepack: the binary goes into the tarball)
//
// Where the binary comes from, first that applies:
//   1. MEDIAGEN_MOCK_BIN, a binary built elsewhere;
//   2. cargo, when this folder is mock-server/npm of the workspace (an install
//      from a checkout, or `npm pack` there), with the profile chooseProfile()
//      picks (MEDIAGEN_MOCK_CARGO_PROFILE sets it);
//   3. at install only: the binary a packed tarball carries.
// Nothing is downloaded.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const target = path.join(packageDir, "bin", "mediagen-mock");
const crateManifest = path.join(packageDir, "..", "Cargo.toml");

function fail(message) {
  console.error(`mediagen-mock: ${message}`);
  process.exit(1);
}

/** The mock's crate around this folder: true when it is mock-server/npm of the workspace. */
function inWorkspace() {
  try {
    return /^name\s*=\s*"mediagen-mock-server"/m.test(fs.readFileSync(crateManifest, "utf8"));
  } catch {
    return false;
  }
}

function hasCargo() {
  return spawnSync("cargo", ["--version"], { stdio: "ignore" }).status === 0;
}

/**
 * The cargo profile to build: MEDIAGEN_MOCK_CARGO_PROFILE; for a pack,
 * `release`; for an install, the one the workspace has already built the
 * binary with (release first, then dev), so that cargo only checks it is
 * fresh; `release` when it has neither.
 */
function chooseProfile(mode) {
  if (process.env.MEDIAGEN_MOCK_CARGO_PROFILE) return process.env.MEDIAGEN_MOCK_CARGO_PROFILE;
  if (mode === "pack") return "release";
  const metadata = spawnSync(
    "cargo",
    ["metadata", "--no-deps", "--format-version", "1", "--manifest-path", crateManifest],
    { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  if (metadata.status !== 0) return "release";
  const targetDir = JSON.parse(metadata.stdout).target_directory;
  for (const [profile, dir] of [["release", "release"], ["dev", "debug"]]) {
    if (fs.existsSync(path.join(targetDir, dir, "mediagen-mock"))) return profile;
  }
  return "release";
}

/** Builds the binary with cargo and returns its path, as cargo reports it. */
function cargoBuild(profile) {
  const args = ["build", "--manifest-path", crateManifest, "--bin", "mediagen-mock"];
  args.push("--profile", profile, "--message-format=json-render-diagnostics");
  console.error(`mediagen-mock: cargo ${args.join(" ")}`);
  const built = spawnSync("cargo", args, {
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (built.status !== 0) {
    fail(`cargo build failed (exit ${built.status}); its messages are above`);
  }
  const executable = built.stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line))
    .find((m) => m.reason === "compiler-artifact" && m.target?.name === "mediagen-mock")?.executable;
  if (!executable) {
    fail("cargo build succeeded but reported no mediagen-mock executable");
  }
  return executable;
}

/** Puts `source` at bin/mediagen-mock: a hard link (no copy of a large file) when it can. */
function place(source) {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  if (sameFile(source, target)) return;
  const temporary = `${target}.${process.pid}`;
  try {
    fs.linkSync(source, temporary);
  } catch {
    fs.copyFileSync(source, temporary);
  }
  fs.chmodSync(temporary, 0o755);
  // A rename, so that a link npm made to the old file never points at half a file.
  fs.renameSync(temporary, target);
}

/** Whether two paths are links to one file (a rename between them would do nothing). */
function sameFile(a, b) {
  try {
    const [x, y] = [fs.statSync(a), fs.statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

function runs(binary) {
  try {
    return execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
  } catch {
    return null;
  }
}

const mode = process.argv[2];
if (mode !== "install" && mode !== "pack") {
  fail("usage: node scripts/binary.js install|pack");
}

const given = process.env.MEDIAGEN_MOCK_BIN;
if (given) {
  if (!runs(given)) {
    fail(`MEDIAGEN_MOCK_BIN=${given} does not run (\`${given} --version\` failed)`);
  }
  place(given);
} else if (inWorkspace() && hasCargo()) {
  place(cargoBuild(chooseProfile(mode)));
} else if (mode === "pack" || !fs.existsSync(target)) {
  const missing = [
    "no binary packed in this package (bin/mediagen-mock)",
    inWorkspace()
      ? `no cargo on PATH to build it from the workspace (${path.dirname(path.dirname(crateManifest))})`
      : "no Rust workspace around this folder to build it from (it is not mock-server/npm of a mediagen checkout)",
    "MEDIAGEN_MOCK_BIN is not set",
  ];
  if (mode === "pack") missing.shift();
  fail(
    `cannot put the mediagen-mock binary in place: ${missing.join("; ")}. ` +
      "Install from a checkout with a Rust toolchain (npm install <checkout>/mock-server/npm), " +
      "install a tarball made there by `npm pack`, or set MEDIAGEN_MOCK_BIN to a built binary; " +
      "a release's two tarballs (mediagen-mock-linux-x64-gnu-VERSION.tgz and mediagen-mock-VERSION.tgz) need none of this.",
  );
}
const version = runs(target);
if (!version) {
  fail(`${target} does not run on this machine (${process.platform}-${process.arch}); ` +
    "set MEDIAGEN_MOCK_BIN to a binary built for it, or install from a checkout with cargo");
}
console.error(`mediagen-mock: ${version} at ${target}`);
