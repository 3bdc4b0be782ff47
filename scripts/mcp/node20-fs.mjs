// See node20-register.mjs: node:fs, with the globSync of Node 22 (cwd is the only
// option the suite passes).
import fs from "node:fs";
import { globSync as tinyGlobSync } from "tinyglobby";

export * from "node:fs";
export default fs;

export function globSync(pattern, options = {}) {
  return tinyGlobSync(pattern, { cwd: options.cwd });
}
