// Where the `mediagen-mock` binary is, for startMock() (index.js) and the
// `mediagen-mock` command (bin/mediagen-mock.js) alike.
//
// A release ships the binary as esbuild and Biome ship theirs: in a platform
// package per machine, `mediagen-mock-<platform>-<arch>[-<libc|abi>]`, each
// named under the main package's `optionalDependencies`. npm installs the one
// whose `os`, `cpu` and `libc` match the machine and skips the others, so
// nothing runs at install time. An install from a checkout builds the binary
// into this package's bin/ instead (scripts/binary.js, its preinstall).
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The variable that names a binary built elsewhere; it wins over everything else. */
export const BINARY_ENV = "MEDIAGEN_MOCK_BIN";

/**
 * Every platform package the scheme names, by the suffix after `mediagen-mock-`,
 * with the `os`, `cpu` and `libc` its package.json declares and the Rust target
 * its binary is built for.
 */
export const PLATFORMS = Object.freeze({
  "linux-x64-gnu": { os: "linux", cpu: "x64", libc: "glibc", target: "x86_64-unknown-linux-gnu" },
  "linux-arm64-gnu": { os: "linux", cpu: "arm64", libc: "glibc", target: "aarch64-unknown-linux-gnu" },
  "linux-x64-musl": { os: "linux", cpu: "x64", libc: "musl", target: "x86_64-unknown-linux-musl" },
  "darwin-arm64": { os: "darwin", cpu: "arm64", target: "aarch64-apple-darwin" },
  "darwin-x64": { os: "darwin", cpu: "x64", target: "x86_64-apple-darwin" },
  "win32-x64-msvc": { os: "win32", cpu: "x64", target: "x86_64-pc-windows-msvc", exe: ".exe" },
});

/**
 * The platforms a release builds, one runner each: the main package names each
 * one's package under `optionalDependencies` (scripts/dist.js). A platform
 * whose runner builds it is one more line here.
 */
export const RELEASED = Object.freeze([
  "linux-x64-gnu",
]);

/** The mock did not come up, or there is no binary to start; `log` is what it wrote. */
export class MockStartError extends Error {
  constructor(message, log = "") {
    super(log.trim() ? `${message}\n--- mediagen-mock log ---\n${log.trim()}` : message);
    this.name = "MockStartError";
    this.log = log;
  }
}

let detectedLibc;

/**
 * `gnu` or `musl`, as detect-libc tells them: Node built against glibc reports
 * the glibc it runs on, and one built for musl reports none.
 */
function hostLibc() {
  if (detectedLibc === undefined) {
    // The network part of the report is slow to gather and of no use here.
    const excluded = process.report.excludeNetwork;
    process.report.excludeNetwork = true;
    try {
      detectedLibc = process.report.getReport().header?.glibcVersionRuntime ? "gnu" : "musl";
    } finally {
      process.report.excludeNetwork = excluded;
    }
  }
  return detectedLibc;
}

/**
 * The platform package for a machine, this one by default:
 * `mediagen-mock-linux-x64-gnu`, `mediagen-mock-darwin-arm64`,
 * `mediagen-mock-win32-x64-msvc`, …
 */
export function platformPackage({ platform = process.platform, arch = process.arch, libc } = {}) {
  let suffix = "";
  if (platform === "linux") suffix = `-${libc ?? hostLibc()}`;
  else if (platform === "win32") suffix = "-msvc";
  return `mediagen-mock-${platform}-${arch}${suffix}`;
}

const packageDir = path.dirname(fileURLToPath(import.meta.url));
const executable = process.platform === "win32" ? "mediagen-mock.exe" : "mediagen-mock";

/**
 * The binary in this machine's platform package, resolved as an import from
 * this package would be (node_modules beside it or above it); null when npm
 * did not install the package.
 */
function platformBinary(name) {
  let manifest;
  try {
    manifest = createRequire(import.meta.url).resolve(`${name}/package.json`);
  } catch {
    return null;
  }
  return path.join(path.dirname(manifest), "bin", executable);
}

/** What this copy of the package names under `optionalDependencies`: none when it comes from a checkout. */
function optionalDependencies() {
  try {
    return JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8")).optionalDependencies ?? {};
  } catch {
    return {};
  }
}

/**
 * The `mediagen-mock` binary, first that applies:
 *   1. MEDIAGEN_MOCK_BIN;
 *   2. the platform package npm installed for this machine
 *      (`mediagen-mock-linux-x64-gnu`, …; `platformPackage()` names it);
 *   3. this package's bin/mediagen-mock, built by an install from a checkout;
 *   4. PATH (not a launcher of this package that npm links there).
 * With none, a `MockStartError` says where it looked, which platform package
 * is missing and how to get a binary.
 */
export function findBinary(env = process.env) {
  const given = env[BINARY_ENV];
  if (given) {
    if (!fs.existsSync(given)) throw new MockStartError(`${BINARY_ENV}=${given} is not a file`);
    return given;
  }
  const name = platformPackage();
  const prebuilt = platformBinary(name);
  if (prebuilt && isExecutable(prebuilt)) return prebuilt;
  const packaged = path.join(packageDir, "bin", "mediagen-mock");
  if (isExecutable(packaged)) return packaged;
  for (const dir of (env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, executable);
    // node_modules/.bin/mediagen-mock is a launcher (bin/mediagen-mock.js), which would run itself.
    if (isExecutable(candidate) && !isNodeScript(candidate)) return candidate;
  }
  throw new MockStartError(notFound(name, prebuilt, packaged));
}

/** The message for no binary at all: each place looked in, then what to do. */
function notFound(name, prebuilt, packaged) {
  const machine = `${process.platform}-${process.arch}${process.platform === "linux" ? ` (${hostLibc() === "gnu" ? "glibc" : "musl"})` : ""}`;
  const named = Object.keys(optionalDependencies()).filter((dep) => dep.startsWith("mediagen-mock-"));
  let platformLine;
  if (prebuilt) {
    platformLine = `${name} is installed, but has no executable ${prebuilt}: install it again`;
  } else if (named.includes(name)) {
    platformLine =
      `${name}, the prebuilt binary for ${machine}, is not installed: npm leaves it out when optional ` +
      "dependencies are omitted (--omit=optional, --no-optional, omit=optional in .npmrc), " +
      "or when the lockfile was made on another platform";
  } else if (named.length) {
    platformLine = `${name}: there is no prebuilt package for ${machine} (this release has ${named.join(", ")})`;
  } else {
    platformLine =
      `${name} is not installed, and this copy of mediagen-mock names no platform package ` +
      "(it comes from a checkout; its install builds bin/mediagen-mock)";
  }
  return [
    `no mediagen-mock binary for ${machine}:`,
    `  - ${BINARY_ENV} is not set`,
    `  - ${platformLine}`,
    `  - ${packaged} does not exist`,
    "  - PATH has no mediagen-mock",
    "To get one: install again without --omit=optional, if that was it; or build it in a checkout",
    `(cargo build --release -p mediagen-mock-server) and set ${BINARY_ENV}=<checkout>/target/release/mediagen-mock;`,
    "or npm install <checkout>/mock-server/npm, which builds it with cargo.",
  ].join("\n");
}

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Whether a file starts with a `#!` line that runs node. */
function isNodeScript(file) {
  const head = Buffer.alloc(128);
  let read = 0;
  let fd;
  try {
    fd = fs.openSync(file, "r");
    read = fs.readSync(fd, head, 0, head.length, 0);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  return /^#!.*\bnode\b/.test(head.subarray(0, read).toString("latin1").split("\n")[0]);
}
