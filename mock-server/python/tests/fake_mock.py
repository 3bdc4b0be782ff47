"""A stand-in for the mediagen-mock binary: prints the same banner, answers
/health, and keeps what the fault API calls send, so the client side of
/_mock/faults can be tested before a binary has it. GET /_fake/argv and
GET /_fake/log tell what it was started with and what it received."""

from __future__ import annotations

import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

faults: dict[str, dict[str, Any]] = {}
log: list[dict[str, Any]] = []


class Handler(BaseHTTPRequestHandler):
    def answer(self, status: int, body: Any = None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        log.append({"method": self.command, "path": self.path, "body": body})
        route = (self.command, self.path)
        if route == ("GET", "/health"):
            self.answer(200, {"status": "ok"})
        elif route == ("GET", "/_fake/argv"):
            self.answer(200, sys.argv[1:])
        elif route == ("GET", "/_fake/log"):
            self.answer(200, log)
        elif route == ("POST", "/_mock/faults"):
            fault = {"id": f"fault-{len(faults) + 1}", **body, "remaining": body.get("count", 1)}
            faults[fault["id"]] = fault
            self.answer(201, fault)
        elif route == ("GET", "/_mock/faults"):
            self.answer(200, {"data": list(faults.values())})
        elif route == ("DELETE", "/_mock/faults"):
            faults.clear()
            self.answer(204)
        elif self.command == "DELETE" and self.path.startswith("/_mock/faults/"):
            found = faults.pop(self.path.rsplit("/", 1)[1], None)
            if found:
                self.answer(204)
            else:
                error = {"code": "NOT_FOUND", "message": "No such fault", "requestId": "req_1"}
                self.answer(404, {"error": {**error, "timestamp": "2026-01-01T00:00:00.000Z"}})
        else:
            self.answer(404, {"error": {"code": "NOT_FOUND", "message": "No route"}})

    do_GET = do_POST = do_PUT = do_DELETE = handle_any

    def log_message(self, format: str, *args: Any) -> None:
        pass


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"mediagen-mock listening on http://127.0.0.1:{server.server_port}", flush=True)
    print("demo API key: mg_live_fake_key", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
