// The npm packages of a release, from a built binary:
//
//   node mock-server/npm/scripts/dist.js --binary PATH --out OUTDIR
//
// writes OUTDIR/mediagen-mock-VERSION.tgz (this package, with no script run at
// install or pack time and the platform package under optionalDependencies)
// and OUTDIR/mediagen-mock-linux-x64-gnu-VERSION.tgz (the binary, with `os`,
// `cpu` and `libc` set, so npm installs it on that platform only). Another
// platform is one more entry in PLATFORMS, packed on its own release runner.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const repoRoot = path.resolve(packageDir, "..", "..");

/** Each platform package this runner builds: its name and its npm constraints. */
const PLATFORMS = [{ name: "mediagen-mock-linux-x64-gnu", os: ["linux"], cpu: ["x64"], libc: ["glibc"] }];
/** Files of the checkout's package that only an install from a checkout uses. */
const CHECKOUT_ONLY = ["bin/mediagen-mock", "scripts/binary.js"];
const LICENSES = ["LICENSE-MIT", "LICENSE-APACHE"];

function fail(message) {
  console.error(`dist.js: ${message}`);
  process.exit(1);
}

const { values } = parseArgs({ options: { binary: { type: "string" }, out: { type: "string" } } });
if (!values.binary || !values.out) fail("usage: node scripts/dist.js --binary PATH --out OUTDIR");
const out = path.resolve(values.out);
const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8"));
const { version } = manifest;
const told = execFileSync(values.binary, ["--version"], { encoding: "utf8" }).trim();
if (told !== `mediagen-mock ${version}`) {
  fail(`the binary says "${told}", the package is ${version}: build the binary of this checkout`);
}

const staging = fs.mkdtempSync(path.join(os.tmpdir(), "mediagen-mock-dist-"));
process.on("exit", () => fs.rmSync(staging, { recursive: true, force: true }));

/** `npm pack` of a staged folder into OUTDIR; returns the tarball's path. */
function pack(dir, expected) {
  execFileSync("npm", ["pack", "--silent", "--pack-destination", out], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  const tarball = path.join(out, expected);
  if (!fs.existsSync(tarball)) fail(`npm pack did not write ${expected}`);
  console.log(tarball);
  return tarball;
}

function write(dir, file, text) {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), text);
}

function copyLicenses(dir) {
  for (const license of LICENSES) fs.copyFileSync(path.join(repoRoot, license), path.join(dir, license));
}

fs.mkdirSync(out, { recursive: true });
for (const platform of PLATFORMS) {
  const dir = path.join(staging, platform.name);
  const binary = path.join(dir, "bin", "mediagen-mock");
  fs.mkdirSync(path.dirname(binary), { recursive: true });
  fs.copyFileSync(values.binary, binary);
  fs.chmodSync(binary, 0o755);
  copyLicenses(dir);
  const { license, repository } = manifest;
  write(dir, "package.json", `${JSON.stringify({
    name: platform.name,
    version,
    description: `The mediagen-mock binary for ${platform.os}-${platform.cpu}-${platform.libc}; installed by the package mediagen-mock`,
    license,
    repository,
    os: platform.os,
    cpu: platform.cpu,
    libc: platform.libc,
    files: ["bin/mediagen-mock", ...LICENSES],
    preferUnplugged: true,
  }, null, 2)}\n`);
  write(dir, "README.md", `# ${platform.name}\n\nThe \`mediagen-mock\` binary on ${platform.os}-${platform.cpu} (${platform.libc}). Install the package \`mediagen-mock\`, not this one: npm picks this one on a matching machine.\n`);
  pack(dir, `${platform.name}-${version}.tgz`);
}

const main = path.join(staging, "mediagen-mock");
const files = manifest.files.filter((f) => !CHECKOUT_ONLY.includes(f));
for (const entry of fs.readdirSync(packageDir)) {
  if (/\.(js|d\.ts)$/.test(entry) || entry === "README.md") {
    fs.cpSync(path.join(packageDir, entry), path.join(main, entry));
  }
}
copyLicenses(main);
const staged = { ...manifest, files: [...files, ...LICENSES] };
delete staged.scripts;
staged.optionalDependencies = Object.fromEntries(PLATFORMS.map((p) => [p.name, version]));
write(main, "package.json", `${JSON.stringify(staged, null, 2)}\n`);
pack(main, `mediagen-mock-${version}.tgz`);
