"""A webhook receiver as a Python integrator writes one, with the
`standardwebhooks` package: 204 for a delivery it verifies, 400 otherwise.
Prints its port, then a JSON line per delivery. Usage: receiver.py SECRET"""

import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks.webhooks import Webhook

webhook = Webhook(sys.argv[1])


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            webhook.verify(body, headers)
            status, error = 204, None
        except Exception as err:  # the package raises its own WebhookVerificationError
            status, error = 400, str(err)
        self.send_response(status)
        self.end_headers()
        print(json.dumps({"status": status, "type": json.loads(body).get("type"), "error": error}), flush=True)

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", 0), Receiver)
print(server.server_address[1], flush=True)
server.serve_forever()
