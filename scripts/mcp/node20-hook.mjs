// See node20-register.mjs: `fs` as the conformance suite's modules import it.
export async function resolve(specifier, context, next) {
  const suite = context.parentURL?.includes("/@modelcontextprotocol/conformance/");
  if (suite && (specifier === "fs" || specifier === "node:fs")) {
    return { url: new URL("./node20-fs.mjs", import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
