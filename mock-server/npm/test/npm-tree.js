// A project folder laid out as npm installs a release of this package, for the
// tests of binary resolution and of the launcher: node_modules/mediagen-mock
// (this package's files, its package.json as scripts/dist.js stages it),
// node_modules/.bin/mediagen-mock (npm's link to the launcher) and, when
// asked, this machine's platform package. Fake binaries are shell scripts
// that say who they are.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { platformPackage } from "../find-binary.js";

export const packageDir = fileURLToPath(new URL("..", import.meta.url));
export const version = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8")).version;

/** A folder of its own, removed after the test. */
export function tempDir(t, prefix = "mediagen-mock-test-") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** An executable shell script at `file` that prints `name` and its arguments, one a line, and exits with FAKE_EXIT. */
export function fakeBinary(file, name) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\necho "${name}"\nfor a in "$@"; do printf '%s\\n' "$a"; done\nexit "\${FAKE_EXIT:-0}"\n`);
  fs.chmodSync(file, 0o755);
  return file;
}

/**
 * The project folder. `platform`: put this machine's platform package there,
 * with a fake binary; `checkout`: a fake binary at the package's own
 * bin/mediagen-mock, as an install from a checkout places it;
 * `optionalDependencies`: what the main package names (by default, this
 * machine's platform package, as a release names it).
 */
export function npmTree(t, { platform = false, checkout = false, optionalDependencies } = {}) {
  const dir = tempDir(t, "mediagen-mock-tree-");
  const modules = path.join(dir, "node_modules");
  const main = path.join(modules, "mediagen-mock");
  fs.mkdirSync(path.join(main, "bin"), { recursive: true });
  for (const file of fs.readdirSync(packageDir)) {
    if (file.endsWith(".js")) fs.copyFileSync(path.join(packageDir, file), path.join(main, file));
  }
  fs.copyFileSync(path.join(packageDir, "bin", "mediagen-mock.js"), path.join(main, "bin", "mediagen-mock.js"));
  fs.chmodSync(path.join(main, "bin", "mediagen-mock.js"), 0o755);
  const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8"));
  delete manifest.scripts;
  manifest.optionalDependencies = optionalDependencies ?? { [platformPackage()]: version };
  fs.writeFileSync(path.join(main, "package.json"), JSON.stringify(manifest, null, 2));
  fs.mkdirSync(path.join(modules, ".bin"));
  fs.symlinkSync("../mediagen-mock/bin/mediagen-mock.js", path.join(modules, ".bin", "mediagen-mock"));
  const tree = {
    dir,
    bin: path.join(modules, ".bin"),
    launcher: path.join(modules, ".bin", "mediagen-mock"),
    platformBinary: path.join(modules, platformPackage(), "bin", "mediagen-mock"),
    checkoutBinary: path.join(main, "bin", "mediagen-mock"),
  };
  if (platform) {
    const name = platformPackage();
    fs.mkdirSync(path.join(modules, name));
    fs.writeFileSync(path.join(modules, name, "package.json"), JSON.stringify({ name, version }));
    fakeBinary(tree.platformBinary, "platform package");
  }
  if (checkout) fakeBinary(tree.checkoutBinary, "checkout build");
  return tree;
}

/** An environment without MEDIAGEN_MOCK_BIN and the test runner's mark, PATH as given. */
export function cleanEnv(PATH, extra = {}) {
  const env = { ...process.env, PATH, ...extra };
  if (!("MEDIAGEN_MOCK_BIN" in extra)) delete env.MEDIAGEN_MOCK_BIN;
  delete env.NODE_TEST_CONTEXT;
  return env;
}

/** PATH with node and the system's tools, and `dirs` first. */
export function pathWith(...dirs) {
  return [...dirs, path.dirname(process.execPath), "/usr/bin", "/bin"].join(path.delimiter);
}
