// The face and the control contract name the same operations: every
// operation of openapi/mock-control.json (but the pages for people) has its
// method, named after its operationId, sending its method to its path; no
// method lacks its operation.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import { test } from "node:test";

import { MockControl, OPERATIONS } from "../index.js";

const contract = JSON.parse(
  fs.readFileSync(new URL("../../../openapi/mock-control.json", import.meta.url), "utf8"),
);
const camel = (id) => id.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
const operations = Object.entries(contract.paths).flatMap(([route, item]) =>
  Object.entries(item)
    .filter(([, op]) => op?.operationId && op["x-mediagen-face"] !== "page")
    .map(([method, op]) => ({ name: camel(op.operationId), method: method.toUpperCase(), route })),
);

test("each operation of the contract has its method, and each method its operation", () => {
  const methods = Object.getOwnPropertyNames(MockControl.prototype).filter((n) => n !== "constructor");
  assert.deepEqual(methods.toSorted(), operations.map((o) => o.name).toSorted());
  assert.deepEqual(Object.keys(OPERATIONS).toSorted(), methods.toSorted());
});

test("each method sends its operation's method to its path", async () => {
  const seen = [];
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      seen.push({ method: request.method, path: request.url, body });
      response.setHeader("content-type", "application/json");
      // Enough of every answer for the methods that read one.
      response.end(JSON.stringify({ data: [], id: "w_1", baseUrl: "http://127.0.0.1:1/worlds/w_1" }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const control = new MockControl(`http://127.0.0.1:${server.address().port}`);
  try {
    for (const { name, method, route } of operations) {
      seen.length = 0;
      // A value for each path parameter, with a character that must be escaped.
      const args = [...route.matchAll(/\{(\w+)\}/g)].map(([, p]) => `${p} 1`);
      const body = { effect: "error", outcome: "succeed", state: "available" };
      const answer = await control[name](...(args.length ? args : [body]), ...(args.length ? [body] : []));
      await answer?.close?.();
      const expected = route.replace(/\{(\w+)\}/g, (_, p) => encodeURIComponent(`${p} 1`));
      assert.deepEqual(
        seen.map(({ method, path }) => ({ method, path })),
        [{ method, path: expected }],
        name,
      );
      const schema = contract.paths[route][method.toLowerCase()].requestBody;
      assert.equal(seen[0].body !== "", Boolean(schema), `${name} sends a body iff the contract has one`);
    }
  } finally {
    server.close();
  }
});

test("getVerdict sends its strict rules as the contract's query parameter, commas kept", async () => {
  const parameters = contract.paths["/_mock/verdict"].get.parameters ?? [];
  assert.ok(
    parameters.some((p) => p.in === "query" && p.name === "strict"),
    "get_verdict takes the query parameter strict",
  );
  const seen = [];
  const server = http.createServer((request, response) => {
    seen.push(request.url);
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ clean: true, findings: [], checked: { requests: 0, deliveries: 0 } }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const control = new MockControl(`http://127.0.0.1:${server.address().port}`);
  try {
    await control.getVerdict();
    await control.getVerdict({ strict: ["poll-rate", "read-after-final", "poll-rate"] });
    await control.getVerdict({ strict: " poll-rate, read-after-final " });
    await control.getVerdict({ strict: [] });
    assert.deepEqual(seen, [
      "/_mock/verdict",
      "/_mock/verdict?strict=poll-rate,read-after-final",
      "/_mock/verdict?strict=poll-rate,read-after-final",
      "/_mock/verdict",
    ]);
  } finally {
    server.close();
  }
});
