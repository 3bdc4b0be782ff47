// A webhook receiver as a Node integrator writes one, with the `standardwebhooks`
// package: 204 for a delivery it verifies, 400 otherwise. Prints its port, then a
// JSON line per delivery. Usage: node receiver.mjs SECRET
import http from "node:http";
import { Webhook } from "standardwebhooks";

const webhook = new Webhook(process.argv[2].replace(/^whsec_/, ""));
const server = http.createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    let status = 204;
    let error = null;
    try {
      webhook.verify(body, request.headers);
    } catch (err) {
      status = 400;
      error = String(err);
    }
    response.writeHead(status).end();
    console.log(JSON.stringify({ status, type: JSON.parse(body).type, error }));
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
