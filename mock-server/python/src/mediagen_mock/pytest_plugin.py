"""The pytest plugin of `mediagen_mock`, loaded through the `pytest11` entry point.

Fixtures:

- `mediagen_mock_server` (session): one `MockServer` for the whole run. Under
  pytest-xdist (`pytest -n 4`) the controlling process starts it once and every
  worker shares it. With `MEDIAGEN_MOCK_URL` set, nothing is started: the
  fixture connects to that mock (a CI service), with `MEDIAGEN_MOCK_ADMIN_TOKEN`
  when its control API needs one.
- `mediagen_mock` (function): a fresh world on that server, deleted after the
  test: its own users, demo key (`api_key`), clock, faults, settings, request
  log and deliveries. Tests running side by side cannot disturb each other.
- `mediagen_mock_world` (function): keyword arguments of
  `MockServer.create_world` for that world; a `conftest.py` or a module
  overrides it, for example `return {"responses": "minimal"}`.
- `mediagen_mock_options` (session): keyword arguments of `MockServer` when
  this process starts it (not under xdist, nor with `MEDIAGEN_MOCK_URL`).

Options: `--mediagen-mock-arg=FLAG` (repeatable) and the ini setting
`mediagen_mock_args` (one flag a line) pass flags to the binary, e.g.
`--allow-private-webhooks=true`; they apply however the server is started.

The verdict: with the ini setting `mediagen_mock_verdict = strict`, or the
marker `mediagen_mock_strict` on a test, a test whose world ends with a
violation of the service's rules for clients (`World.get_verdict()`) fails,
its report listing the findings. Advice never fails a test.

This module imports pytest, so the package itself does not depend on it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from .server import MockServer, World

__all__ = [
    "mediagen_mock",
    "mediagen_mock_options",
    "mediagen_mock_server",
    "mediagen_mock_world",
]

URL_ENV = "MEDIAGEN_MOCK_URL"
TOKEN_ENV = "MEDIAGEN_MOCK_ADMIN_TOKEN"
_SHARED = pytest.StashKey[MockServer]()


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
    parser.addini(
        "mediagen_mock_args",
        "flags for the mediagen-mock binary, one a line",
        type="linelist",
        default=[],
    )
    parser.addini(
        "mediagen_mock_verdict",
        "'strict' fails a test whose world ends with a violation in the mock's verdict",
        default="",
    )


def _flags(config: pytest.Config) -> list[str]:
    return [*config.getini("mediagen_mock_args"), *(config.getoption("mediagen_mock_args") or [])]


def _is_xdist_controller(config: pytest.Config) -> bool:
    workers = getattr(config.option, "numprocesses", None)
    return bool(workers) and not hasattr(config, "workerinput")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mediagen_mock_strict: fail the test when its world's verdict has a violation",
    )
    # Workers inherit the environment of the process that starts them, so the
    # server this process starts is the one they connect to.
    if _is_xdist_controller(config) and not os.environ.get(URL_ENV):
        server = MockServer(extra_args=_flags(config)).start()
        config.stash[_SHARED] = server
        os.environ[URL_ENV] = server.base_url


def pytest_unconfigure(config: pytest.Config) -> None:
    server = config.stash.get(_SHARED, None)
    if server is not None:
        server.stop()
        os.environ.pop(URL_ENV, None)


@pytest.fixture(scope="session")
def mediagen_mock_options() -> dict[str, Any]:
    """Keyword arguments of the session's `MockServer`; override it in a conftest.py."""
    return {}


@pytest.fixture(scope="session")
def mediagen_mock_server(
    request: pytest.FixtureRequest, mediagen_mock_options: dict[str, Any]
) -> Iterator[MockServer]:
    """One mock server for the run: started here, or the one `MEDIAGEN_MOCK_URL` names."""
    url = os.environ.get(URL_ENV)
    if url:
        yield MockServer.connect(url, admin_token=os.environ.get(TOKEN_ENV))
        return
    options = dict(mediagen_mock_options)
    options["extra_args"] = (*options.get("extra_args", ()), *_flags(request.config))
    with MockServer(**options) as server:
        yield server


@pytest.fixture
def mediagen_mock_world() -> dict[str, Any]:
    """Keyword arguments of `MockServer.create_world` for each test's world."""
    return {}


@pytest.fixture
def mediagen_mock(
    mediagen_mock_server: MockServer, mediagen_mock_world: dict[str, Any]
) -> Iterator[World]:
    """A fresh world on the run's mock server, deleted after the test."""
    world = mediagen_mock_server.create_world(**mediagen_mock_world)
    try:
        yield world
    finally:
        world.delete()


def _strict(item: pytest.Item) -> bool:
    return (
        str(item.config.getini("mediagen_mock_verdict")).strip() == "strict"
        or item.get_closest_marker("mediagen_mock_strict") is not None
    )


def _verdict_text(verdict: dict[str, Any]) -> str:
    """The findings in words, violations first."""
    checked = verdict.get("checked", {})
    lines = [
        f"the mock's verdict on the client is not clean "
        f"({checked.get('requests', 0)} requests, {checked.get('deliveries', 0)} deliveries):"
    ]
    findings = sorted(verdict.get("findings", []), key=lambda f: f.get("severity") != "violation")
    for f in findings:
        lines.append(
            f"  {f.get('severity')} {f.get('rule')} (x{f.get('count')}): {f.get('message')}\n"
            f"    document: {f.get('documentRule')}; do: {f.get('advice')}; "
            f"requests: {', '.join(f.get('requestIds', []))}"
        )
    return "\n".join(lines)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failing test that used the mock gets the end of the mock's log; under
    a strict verdict, a passing test whose world has a violation fails."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    world = getattr(item, "funcargs", {}).get("mediagen_mock")
    # At the end of the call, before the fixture's teardown deletes the world.
    if report.when == "call" and report.passed and isinstance(world, World) and _strict(item):
        verdict = world.get_verdict()
        if not verdict.get("clean", True):
            report.outcome = "failed"
            report.longrepr = _verdict_text(verdict)
    server = getattr(item, "funcargs", {}).get("mediagen_mock_server")
    if report.failed and isinstance(server, MockServer):
        log = server.stderr().splitlines()[-50:]
        if log:
            report.sections.append(("mediagen-mock log (last 50 lines)", "\n".join(log)))
