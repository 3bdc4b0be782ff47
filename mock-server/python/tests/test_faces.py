"""The Python face names every operation of the control contract, one for one."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path

from mediagen_mock import ControlApi, MockServer

CONTRACT = Path(__file__).resolve().parents[3] / "openapi" / "mock-control.json"
# Methods that are not operations: ControlApi's helpers, MockServer's process.
HELPERS = {"url", "control", "balance", "verdict"}
PROCESS = {"command", "start", "stop", "stderr", "connect"}


def _public_methods(cls: type) -> set[str]:
    return {
        name
        for name, value in vars(cls).items()
        if not name.startswith("_") and (callable(value) or isinstance(value, classmethod))
    }


def test_every_control_operation_has_its_method_and_no_method_lacks_one() -> None:
    document = json.loads(CONTRACT.read_text(encoding="utf-8"))
    operations = {
        operation["operationId"]
        for item in document["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict)
        and "operationId" in operation
        and operation.get("x-mediagen-face") != "page"
    }
    world = _public_methods(ControlApi) - HELPERS
    root = _public_methods(MockServer) - PROCESS
    assert not world & root
    assert world | root == operations


def test_get_verdict_sends_its_strict_rules_as_the_contracts_query_parameter() -> None:
    document = json.loads(CONTRACT.read_text(encoding="utf-8"))
    parameters = document["paths"]["/_mock/verdict"]["get"].get("parameters", [])
    assert any(p.get("in") == "query" and p.get("name") == "strict" for p in parameters), (
        "get_verdict takes the query parameter strict"
    )

    seen: list[str] = []

    class Verdicts(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            seen.append(self.path)
            body = b'{"clean": true, "findings": [], "checked": {"requests": 0, "deliveries": 0}}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Verdicts)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        mock = MockServer.connect(f"http://127.0.0.1:{server.server_address[1]}")
        mock.get_verdict()
        mock.get_verdict(strict=["poll-rate", "read-after-final", "poll-rate"])
        mock.verdict(" poll-rate, read-after-final ")
        mock.get_verdict(strict=[])
    finally:
        server.shutdown()
        server.server_close()
    assert seen == [
        "/_mock/verdict",
        "/_mock/verdict?strict=poll-rate,read-after-final",
        "/_mock/verdict?strict=poll-rate,read-after-final",
        "/_mock/verdict",
    ]
