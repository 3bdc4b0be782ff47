// Where the prebuilt `mediagen-mock` of this machine lives: in a platform
// package, as esbuild and Biome ship theirs. The main package names each one
// under `optionalDependencies`; npm installs the one whose `os`, `cpu` and
// `libc` match, and skips the others. A platform is added on a release runner
// of its own (scripts/dist.sh says how) as one more name here and in
// scripts/dist.js:
//   mediagen-mock-linux-x64-gnu      built now
//   mediagen-mock-linux-arm64-gnu, mediagen-mock-linux-x64-musl,
//   mediagen-mock-darwin-arm64, mediagen-mock-darwin-x64, mediagen-mock-win32-x64-msvc
import { createRequire } from "node:module";
import path from "node:path";

/** glibc or musl, as detect-libc tells them: Node reports the glibc it runs on. */
function libc() {
  return process.report?.getReport?.().header?.glibcVersionRuntime ? "gnu" : "musl";
}

/** The platform package this machine needs, e.g. `mediagen-mock-linux-x64-gnu`. */
export function platformPackage(platform = process.platform, arch = process.arch) {
  const suffix = { linux: `-${libc()}`, win32: "-msvc" }[platform] ?? "";
  return `mediagen-mock-${platform}-${arch}${suffix}`;
}

/** The binary in the platform package npm installed for this machine, or null when none is. */
export function platformBinary(from = import.meta.url) {
  const name = platformPackage();
  try {
    const manifest = createRequire(from).resolve(`${name}/package.json`);
    const file = process.platform === "win32" ? "mediagen-mock.exe" : "mediagen-mock";
    return path.join(path.dirname(manifest), "bin", file);
  } catch {
    return null;
  }
}
