"""Fixtures of the example suite: the mock's options, an HTTP client, and the
fault API when the mock has it. `mediagen_mock` itself comes from the
mediagen-mock package's pytest plugin."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mediagen_mock import MockError, MockServer


@pytest.fixture(scope="session")
def mediagen_mock_options() -> dict[str, Any]:
    # The webhook test's receiver listens on 127.0.0.1, which the service refuses
    # as a private address unless the mock is told otherwise.
    return {"allow_private_webhooks": True}


@pytest.fixture
def http(mediagen_mock: MockServer) -> Iterator[httpx.Client]:
    """A plain HTTP client for the mock, with the demo user's key."""
    with httpx.Client(
        base_url=mediagen_mock.base_url,
        headers={"Authorization": f"Bearer {mediagen_mock.api_key}"},
        timeout=10,
        trust_env=False,  # only 127.0.0.1 is talked to; no proxy in between
    ) as client:
        yield client


@pytest.fixture
def fault_api(mediagen_mock: MockServer) -> MockServer:
    """The mock, when it has the fault API (`/_mock/faults`); the test is skipped otherwise."""
    try:
        mediagen_mock.faults()
    except MockError as error:
        if error.status == 404:
            pytest.skip("this mediagen-mock has no fault API (/_mock/faults answers 404)")
        raise
    return mediagen_mock
