"""One mock for the run (manual clock, private webhook addresses allowed for
the receivers on 127.0.0.1), a world per test; the accusation rates at the end."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE))
# The mediagen_mock package is plain Python: taken from the checkout when it is not installed.
sys.path.append(str(REPO / "mock-server" / "python" / "src"))

from harness import TALLIES, Edge  # noqa: E402
from mediagen_mock import MockServer  # noqa: E402


def _binary() -> str:
    return os.environ.get("MEDIAGEN_MOCK_BIN") or str(REPO / "target" / "debug" / "mediagen-mock")


@pytest.fixture(scope="session")
def mock() -> Iterator[MockServer]:
    server = MockServer(clock="manual", allow_private_webhooks=True, binary=_binary())
    with server:
        yield server


@pytest.fixture
def edge(mock: MockServer) -> Iterator[Edge]:
    """A world with a manual clock and the limits off: tests not about limits."""
    settings = {"clock": "manual", "rate_limits": False, "demo_user": False}
    edge = Edge(mock.create_world(**settings), settings)
    world = edge.world
    yield edge
    edge.close()
    world.delete()


@pytest.fixture
def limited(mock: MockServer) -> Iterator[Callable[[], Edge]]:
    """Makes worlds with a manual clock and the service's limits on: a fresh
    one for each run, since the general limit counts per address in a world."""
    made: list[Edge] = []

    def new() -> Edge:
        settings = {"clock": "manual", "rate_limits": True, "demo_user": False}
        made.append(Edge(mock.create_world(**settings), settings))
        return made[-1]

    yield new
    for edge in made:
        edge.close()
        edge.world.delete()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if TALLIES:
        terminalreporter.section("verdict corpus: accusations of correct clients")
        for tally in TALLIES:
            terminalreporter.write_line(tally.line())
