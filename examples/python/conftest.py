"""Fixtures of the example suite: the mock's options and an HTTP client.
`mediagen_mock` itself comes from the mediagen-mock package's pytest plugin."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mediagen_mock import MockServer


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
