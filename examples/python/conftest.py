"""Fixtures of the example suite: an HTTP client for each test's world of the mock.
`mediagen_mock` itself (a fresh world per test on one server) comes from the
mediagen-mock package's pytest plugin; the server's flags are in pytest.ini."""

from __future__ import annotations

from collections.abc import Iterator
import httpx
import pytest

from mediagen_mock import World


@pytest.fixture
def http(mediagen_mock: World) -> Iterator[httpx.Client]:
    """A plain HTTP client for the test's world, with its demo user's key."""
    with httpx.Client(
        base_url=mediagen_mock.base_url,
        headers={"Authorization": f"Bearer {mediagen_mock.api_key}"},
        timeout=10,
        trust_env=False,  # only 127.0.0.1 is talked to; no proxy in between
    ) as client:
        yield client
