// The typed client's types, generated from the contract before the tests
// (never committed, so they cannot drift from openapi/openapi.json).
import fs from "node:fs";

import openapiTS, { astToString } from "openapi-typescript";

const contract = new URL("../../../openapi/openapi.json", import.meta.url);
const out = new URL("../generated/schema.d.ts", import.meta.url);
const ast = await openapiTS(contract);
fs.mkdirSync(new URL(".", out), { recursive: true });
fs.writeFileSync(out, astToString(ast));
console.error(`generated ${out.pathname} from ${contract.pathname}`);
