"""The pytest plugin of `mediagen_mock`, loaded through the `pytest11` entry point.

Fixtures:

- `mediagen_mock_server` (session): one `MockServer` for the whole run.
- `mediagen_mock` (function): the same server, reset before the test, so each
  test starts with an empty mock and the demo user (`api_key`).
- `mediagen_mock_options` (session): keyword arguments of `MockServer`; a
  `conftest.py` overrides it to change them, for example
  `return {"allow_private_webhooks": True}`.

Option: `--mediagen-mock-arg=FLAG` (repeatable) passes a flag to the binary,
e.g. `--mediagen-mock-arg=--rate-limits=off`.

This module imports pytest, so the package itself does not depend on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .server import MockServer

__all__ = ["mediagen_mock", "mediagen_mock_options", "mediagen_mock_server"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mediagen-mock", "the mediagen mock server")
    group.addoption(
        "--mediagen-mock-arg",
        action="append",
        default=[],
        dest="mediagen_mock_args",
        metavar="FLAG",
        help="a flag for the mediagen-mock binary (repeatable); "
        "write it with '=', e.g. --mediagen-mock-arg=--rate-limits=off",
    )


@pytest.fixture(scope="session")
def mediagen_mock_options() -> dict[str, Any]:
    """Keyword arguments of the session's `MockServer`; override it in a conftest.py."""
    return {}


@pytest.fixture(scope="session")
def mediagen_mock_server(
    request: pytest.FixtureRequest, mediagen_mock_options: dict[str, Any]
) -> Iterator[MockServer]:
    """One mock server for the session, stopped at its end."""
    options = dict(mediagen_mock_options)
    flags = request.config.getoption("mediagen_mock_args") or []
    options["extra_args"] = (*options.get("extra_args", ()), *flags)
    with MockServer(**options) as server:
        yield server


@pytest.fixture
def mediagen_mock(mediagen_mock_server: MockServer) -> MockServer:
    """The session's mock server, reset: no users but the demo user, no tasks,
    no endpoints, no forced outcomes, the clock where reset leaves it."""
    mediagen_mock_server.reset()
    return mediagen_mock_server
