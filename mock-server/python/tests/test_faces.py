"""The Python face names every operation of the control contract, one for one."""

from __future__ import annotations

import json
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
