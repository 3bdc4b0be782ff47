// Node 20 (what CI has) lacks fs.globSync, which the conformance suite imports
// (Node 22 has it): this hook gives that one module an `fs` with a globSync from
// tinyglobby, a dependency of the suite's own tree. Loaded with `node --import`.
import { register } from "node:module";

register("./node20-hook.mjs", import.meta.url);
