"""The client side of the fault API and of --responses, against a stand-in
binary (tests/fake_mock.py) that records what it is sent."""

from __future__ import annotations

import json
import stat
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from mediagen_mock import MockError, MockServer

NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture
def fake_binary(tmp_path: Path) -> str:
    script = tmp_path / "mediagen-mock"
    fake = Path(__file__).with_name("fake_mock.py")
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{fake}" "$@"\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def get(mock: MockServer, path: str) -> Any:
    with NO_PROXY.open(mock.url(path), timeout=5) as answer:
        return json.load(answer)


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in is a shell script")
def test_fault_calls_send_the_documented_bodies(fake_binary: str) -> None:
    with MockServer(binary=fake_binary) as mock:
        fault = mock.inject_fault(
            "error", method="POST", path="/v1/generations", status=503, code="SERVICE_UNAVAILABLE"
        )
        mock.inject_fault("delay", delay_seconds=2.5, count=3, user_id="u-1")
        assert [f["id"] for f in mock.faults()] == [fault["id"], "fault-2"]
        mock.remove_fault(fault["id"])
        with pytest.raises(MockError) as raised:
            mock.remove_fault(fault["id"])
        mock.clear_faults()
        assert mock.faults() == []
        sent = [(e["method"], e["path"], e["body"]) for e in get(mock, "/_fake/log")]

    assert raised.value.status == 404 and raised.value.code == "NOT_FOUND"
    assert fault["remaining"] == 1
    assert [s for s in sent if s[0] != "GET"] == [
        (
            "POST",
            "/_mock/faults",
            {
                "effect": "error",
                "count": 1,
                "method": "POST",
                "path": "/v1/generations",
                "status": 503,
                "code": "SERVICE_UNAVAILABLE",
            },
        ),
        (
            "POST",
            "/_mock/faults",
            {"effect": "delay", "count": 3, "userId": "u-1", "delaySeconds": 2.5},
        ),
        ("DELETE", "/_mock/faults/fault-1", None),
        ("DELETE", "/_mock/faults/fault-1", None),
        ("DELETE", "/_mock/faults", None),
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in is a shell script")
@pytest.mark.parametrize(
    ("responses", "flags"), [("full", []), ("minimal", ["--responses=minimal"])]
)
def test_responses_is_passed_only_when_not_full(
    fake_binary: str, responses: Any, flags: list[str]
) -> None:
    with MockServer(binary=fake_binary, responses=responses) as mock:
        argv = get(mock, "/_fake/argv")
    assert [a for a in argv if a.startswith("--responses")] == flags
