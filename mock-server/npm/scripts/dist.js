// The npm packages of a release, from a built binary:
//
//   node mock-server/npm/scripts/dist.js --binary PATH --out OUTDIR [--platform linux-x64-gnu]
//
// writes, and prints the paths of,
//   OUTDIR/mediagen-mock-VERSION.tgz      this package with no script at all (so
//       nothing runs at install or pack time) and each released platform
//       package under `optionalDependencies`, at VERSION;
//   OUTDIR/mediagen-mock-linux-x64-gnu-VERSION.tgz   the binary alone, with
//       `os`, `cpu` and `libc` set, so that npm installs it on that platform only.
// VERSION is package.json's, and the binary must say it (`mediagen-mock
// --version`). Each platform is packed on a runner that can run its binary,
// with --platform (find-binary.js lists the scheme, RELEASED those built).
// The same inputs give the same bytes: npm pack fixes times and modes.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { PLATFORMS, RELEASED } from "../find-binary.js";

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const repoRoot = path.resolve(packageDir, "..", "..");
/** Files of the checkout's package that only its install from a checkout uses. */
const CHECKOUT_ONLY = new Set(["bin/mediagen-mock", "scripts/binary.js"]);
const LICENSES = ["LICENSE-MIT", "LICENSE-APACHE"];

function fail(message) {
  console.error(`dist.js: ${message}`);
  process.exit(1);
}

const { values } = parseArgs({
  options: {
    binary: { type: "string" },
    out: { type: "string" },
    platform: { type: "string", default: "linux-x64-gnu" },
  },
});
if (!values.binary || !values.out) fail("usage: node scripts/dist.js --binary PATH --out OUTDIR [--platform linux-x64-gnu]");
const platform = PLATFORMS[values.platform];
if (!platform) fail(`--platform ${values.platform}: one of ${Object.keys(PLATFORMS).join(", ")}`);
if (!RELEASED.includes(values.platform)) {
  fail(`--platform ${values.platform} is not in RELEASED (find-binary.js): the main package would not name it`);
}
const platformName = `mediagen-mock-${values.platform}`;
const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8"));
const { version } = manifest;

let told;
try {
  told = execFileSync(values.binary, ["--version"], { encoding: "utf8" }).trim();
} catch (error) {
  fail(`${values.binary} --version failed: ${error.message}`);
}
if (told !== `mediagen-mock ${version}`) {
  fail(`${values.binary} says "${told}", package.json is ${version}: pack the binary built from this checkout`);
}

const out = path.resolve(values.out);
fs.mkdirSync(out, { recursive: true });
const staging = fs.mkdtempSync(path.join(os.tmpdir(), "mediagen-mock-dist-"));
process.on("exit", () => fs.rmSync(staging, { recursive: true, force: true }));

function writeJson(file, value) {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

function copyLicenses(dir) {
  for (const license of LICENSES) fs.copyFileSync(path.join(repoRoot, license), path.join(dir, license));
}

/** `npm pack` of a staged folder into OUTDIR; checks the tarball's name and returns its path. */
function pack(dir, expected) {
  const [packed] = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", out], {
      cwd: dir,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  if (packed.filename !== expected) fail(`npm pack wrote ${packed.filename}, not ${expected}`);
  return path.join(out, expected);
}

// The platform package: the binary, executable, and what npm needs to pick it.
const platformDir = path.join(staging, platformName);
const binaryFile = `bin/mediagen-mock${platform.exe ?? ""}`;
fs.mkdirSync(path.join(platformDir, "bin"), { recursive: true });
fs.copyFileSync(values.binary, path.join(platformDir, binaryFile));
fs.chmodSync(path.join(platformDir, binaryFile), 0o755);
copyLicenses(platformDir);
const machine = `${platform.os} ${platform.cpu}${platform.libc ? ` (${platform.libc})` : ""}`;
writeJson(path.join(platformDir, "package.json"), {
  name: platformName,
  version,
  description: `The mediagen-mock binary for ${machine}, installed by the package mediagen-mock`,
  license: manifest.license,
  repository: manifest.repository,
  os: [platform.os],
  cpu: [platform.cpu],
  ...(platform.libc ? { libc: [platform.libc] } : {}),
  files: [binaryFile, ...LICENSES],
  preferUnplugged: true,
});
fs.writeFileSync(
  path.join(platformDir, "README.md"),
  `# ${platformName}\n\nThe \`mediagen-mock\` binary for ${machine}. Install \`mediagen-mock\`, ` +
    "which names this package under `optionalDependencies`; npm picks it on a matching machine.\n",
);

// The main package: the files the checkout's package.json lists, without the
// binary and its install script, and without any script at all.
const mainDir = path.join(staging, "mediagen-mock");
const [listed] = JSON.parse(
  execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: packageDir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }),
);
for (const { path: file } of listed.files) {
  if (CHECKOUT_ONLY.has(file) || file === "package.json") continue;
  fs.mkdirSync(path.dirname(path.join(mainDir, file)), { recursive: true });
  fs.copyFileSync(path.join(packageDir, file), path.join(mainDir, file));
}
copyLicenses(mainDir);
const staged = { ...manifest };
// preinstall and prepack build or place the binary from a checkout; `test`
// runs files the tarball does not carry.
delete staged.scripts;
staged.files = [...manifest.files.filter((f) => !CHECKOUT_ONLY.has(f) && !f.startsWith("!")), ...LICENSES];
staged.optionalDependencies = Object.fromEntries(RELEASED.map((p) => [`mediagen-mock-${p}`, version]));
writeJson(path.join(mainDir, "package.json"), staged);

console.log(pack(mainDir, `mediagen-mock-${version}.tgz`));
console.log(pack(platformDir, `${platformName}-${version}.tgz`));
