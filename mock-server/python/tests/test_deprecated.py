"""The Python names of 0.1.0 still answer, on the world the `mediagen_mock`
fixture gives, each with a DeprecationWarning that names its replacement, until
0.3.0."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from test_faults import call

from mediagen_mock import World


def old(world: World, name: str, *args: Any, replacement: str) -> Any:
    """Calls `world.<name>(*args)`, which must warn once, at this call, naming `replacement`."""
    with pytest.warns(DeprecationWarning, match=rf"^{name}\(.*use {replacement}\(") as warned:
        answer = getattr(world, name)(*args)
    assert [w.filename for w in warned] == [__file__]
    return answer


def at(clock: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(clock["now"].replace("Z", "+00:00"))


def test_the_old_readers_answer_what_their_replacements_answer(mediagen_mock: World) -> None:
    # Every list holds something of its own, so that no reader can pass for another.
    user = mediagen_mock.create_user(balance_rub=10, email="ada@example.com")
    mediagen_mock.inject_fault("error", path="/v1/billing/balance", status=503)
    call(mediagen_mock, "POST", "/v1/auth/magic-link/request", {"email": user.email})
    readers = {
        "clock": "get_clock",
        "settings": "get_settings",
        "faults": "list_faults",
        "requests": "list_requests",
        "deliveries": "list_deliveries",
        "outbox": "list_outbox",
    }

    answers = {name: old(mediagen_mock, name, replacement=new) for name, new in readers.items()}

    assert answers == {name: getattr(mediagen_mock, new)() for name, new in readers.items()}
    assert answers["outbox"][0]["to"] == "ada@example.com"
    assert answers["faults"][0]["path"] == "/v1/billing/balance"
    assert answers["requests"][0]["path"] == "/v1/auth/magic-link/request"


def test_the_old_writers_change_what_their_replacements_change(mediagen_mock: World) -> None:
    before = mediagen_mock.get_clock()

    moved = old(mediagen_mock, "advance", 30, replacement="advance_clock")
    old(mediagen_mock, "set_create_latency", 2.5, replacement="update_settings")
    old(mediagen_mock, "set_responses", "minimal", replacement="update_settings")
    old(mediagen_mock, "set_auto_pay", 60, replacement="update_settings")
    old(
        mediagen_mock, "pin_dns", "internal.example.com", ["10.0.0.7"], replacement="set_dns"
    )

    assert (at(moved) - at(before)).total_seconds() == 30
    settings = mediagen_mock.get_settings()
    assert (settings["createLatencySeconds"], settings["responses"]) == (2.5, "minimal")
    assert settings["autoPaySeconds"] == 60
    old(mediagen_mock, "set_auto_pay", None, replacement="update_settings")
    assert mediagen_mock.get_settings()["autoPaySeconds"] is None
    # The pinned name resolves to a private address, which an endpoint may not use.
    status, answer = call(
        mediagen_mock, "POST", "/v1/webhook-endpoints", {"url": "https://internal.example.com/h"}
    )
    assert status == 400
    assert "Private IP addresses are not allowed" in answer["error"]["message"]
