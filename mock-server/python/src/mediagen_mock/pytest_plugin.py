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

The verdict (`World.get_verdict()`): with the ini setting
`mediagen_mock_verdict = strict`, or the marker `mediagen_mock_strict` on a
test, a test that passed fails when its world ends with a violation of the
service's rules for clients. `mediagen_mock_verdict = strict:poll-rate,read-after-final`,
or `@pytest.mark.mediagen_mock_strict("poll-rate", "read-after-final")`, makes
those rules of advice fail it too; other advice never does. The mock chooses
what fails (`GET /_mock/verdict?strict=...`, each finding's `fails`) and
refuses a rule id it does not know, which fails the test with its message.
The report's first line starts with the rules that fail ("create-retry-new-key,
poll-rate — mediagen-mock verdict: ..."), so that pytest's one-line summary shows
them first; the findings follow. A test that
fails on its own gets the verdict as a report section ("mediagen-mock
verdict") when its world's verdict has findings.

This module imports pytest, so the package itself does not depend on it.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator, Mapping, Sequence
from typing import Any

import pytest

from .errors import MockError
from .server import MockServer, World, _strict_rules

__all__ = [
    "mediagen_mock",
    "mediagen_mock_options",
    "mediagen_mock_server",
    "mediagen_mock_world",
]

URL_ENV = "MEDIAGEN_MOCK_URL"
TOKEN_ENV = "MEDIAGEN_MOCK_ADMIN_TOKEN"
VERDICT_INI = "mediagen_mock_verdict"
STRICT_MARKER = "mediagen_mock_strict"
_SHARED = pytest.StashKey[MockServer]()
# The ini's verdict setting, read once: strict or not, and the rules of advice it adds.
_SETTING = pytest.StashKey[tuple[bool, tuple[str, ...]]]()
# Set on a test that the verdict itself failed, so its report does not show it twice.
_FAILED_BY_VERDICT = pytest.StashKey[bool]()


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
        VERDICT_INI,
        "'strict' fails a test whose world ends with a violation in the mock's verdict; "
        "'strict:RULE,RULE' also with a finding of those rules of advice; 'off' (default)",
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
        f"{STRICT_MARKER}(*rules): fail the test when its world's verdict has a violation, "
        "or a finding of one of the rules of advice given",
    )
    config.stash[_SETTING] = _verdict_setting(str(config.getini(VERDICT_INI)))
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


def _verdict_setting(value: str) -> tuple[bool, tuple[str, ...]]:
    """`mediagen_mock_verdict`: '' or 'off', 'strict', or 'strict:RULE,RULE'."""
    text = value.strip()
    if text in ("", "off"):
        return False, ()
    if text == "strict":
        return True, ()
    if text.startswith("strict:"):
        return True, tuple(_strict_rules(text[len("strict:") :]))
    raise pytest.UsageError(
        f"{VERDICT_INI} = {value.strip()!r}: expected 'strict', 'strict:RULE,RULE' "
        "(rules of advice that fail a test as well, such as strict:poll-rate,read-after-final) "
        "or 'off'"
    )


def _strictness(item: pytest.Item) -> tuple[bool, tuple[str, ...]]:
    """Whether the verdict can fail this test, and the rules of advice that
    fail it as well: the ini's, and those of its markers."""
    strict, rules = item.config.stash.get(_SETTING, (False, ()))
    chosen = list(rules)
    for marker in item.iter_markers(STRICT_MARKER):
        strict = True
        for arg in marker.args:
            # Ids as strings ("poll-rate", or "poll-rate,read-after-final") or a list of
            # them; the mock judges whether each is a rule.
            if isinstance(arg, str):
                chosen.extend(_strict_rules(arg))
            elif isinstance(arg, (list, tuple, set, frozenset)):
                chosen.extend(_strict_rules(str(rule) for rule in arg))
            else:
                chosen.extend(_strict_rules(str(arg)))
    return strict, tuple(dict.fromkeys(chosen))


def _world(item: pytest.Item) -> World | None:
    world = getattr(item, "funcargs", {}).get("mediagen_mock")
    return world if isinstance(world, World) else None


def _fails(finding: Mapping[str, Any]) -> bool:
    # A mock older than `fails` failed on violations only.
    if "fails" in finding:
        return bool(finding["fails"])
    return finding.get("severity") == "violation"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _verdict_text(verdict: Mapping[str, Any], strict: Sequence[str] = ()) -> str:
    """The verdict in words: a first line that names the rules that fail the
    test (what a one-line summary shows), then each finding, those first."""
    findings: list[Mapping[str, Any]] = list(verdict.get("findings") or [])
    failing = [f for f in findings if _fails(f)]
    checked = verdict.get("checked") or {}
    scope = f"strict: {', '.join(strict)}; " if strict else ""
    scope += (
        f"{checked.get('requests', 0)} requests, {checked.get('deliveries', 0)} deliveries checked"
    )
    rules = ", ".join(dict.fromkeys(str(f.get("rule")) for f in failing))
    if not verdict.get("clean", True):
        head = (
            f"{rules or 'not clean'} — mediagen-mock verdict: {_plural(len(failing), 'finding')} "
            f"of {len(findings)} {'fails' if len(failing) == 1 else 'fail'} the test ({scope})"
        )
    elif findings:
        others = ", ".join(dict.fromkeys(str(f.get("rule")) for f in findings))
        head = f"mediagen-mock verdict: clean — advice that fails nothing: {others} ({scope})"
    else:
        head = f"mediagen-mock verdict: clean — no finding ({scope})"
    lines = [head]
    for f in sorted(findings, key=lambda f: not _fails(f)):
        lines.append(
            f"  {f.get('severity')} {f.get('rule')} (x{f.get('count')})"
            f"{' fails' if _fails(f) else ''}: {f.get('message')}"
        )
        lines.append(f"    document: {f.get('documentRule')}; do: {f.get('advice')}")
        endpoint = f.get("endpoint")
        if isinstance(endpoint, Mapping):
            lines.append(
                f"    endpoint: {endpoint.get('id')} {endpoint.get('url')}; "
                f"messages: {', '.join(f.get('messageIds') or [])}"
            )
        else:
            lines.append(f"    requests: {', '.join(f.get('requestIds') or [])}")
    return "\n".join(lines)


def _refusal(strict: Sequence[str], error: Exception) -> str:
    """An answer that is not a verdict: for a rule id the mock does not know,
    its message, which lists the ids it knows."""
    chosen = f"strict:{','.join(strict)}" if strict else "the verdict"
    if isinstance(error, MockError) and error.message:
        call = f"{error.method} {error.path}: {error.status} {error.code}"
        if error.request_id:
            call += f" ({error.request_id})"
        return f"mediagen-mock verdict: {chosen} refused — {error.message}\n  {call}"
    return f"mediagen-mock verdict: {chosen} could not be read — {error}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Under a strict verdict, a test that passed fails when its world's
    verdict is not clean, at the end of its call (before the fixture's
    teardown deletes the world)."""
    result = yield
    world = _world(item)
    strict, rules = _strictness(item)
    if world is None or not strict:
        return result
    try:
        verdict = world.get_verdict(rules)
    except MockError as error:
        # An unknown rule id: the mock's 400 lists the ids it knows.
        message = _refusal(rules, error)
    else:
        if verdict.get("clean", True):
            return result
        message = _verdict_text(verdict, rules)
    item.stash[_FAILED_BY_VERDICT] = True
    # Outside the `except`, so the report shows the message alone, not a chain.
    pytest.fail(message, pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A test that failed on its own gets its world's verdict, when it has
    findings; a failing test that used the mock, the end of the mock's log."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    world = _world(item)
    if (
        report.when == "call"
        and report.failed
        and world is not None
        and not item.stash.get(_FAILED_BY_VERDICT, False)
    ):
        strict, rules = _strictness(item)
        chosen = rules if strict else ()
        try:
            verdict = world.get_verdict(chosen)
            text = _verdict_text(verdict, chosen) if verdict.get("findings") else ""
        except (MockError, OSError) as error:
            text = _refusal(chosen, error)
        if text:
            report.sections.append(("mediagen-mock verdict", text))
    server = getattr(item, "funcargs", {}).get("mediagen_mock_server")
    if report.failed and isinstance(server, MockServer):
        log = server.stderr().splitlines()[-50:]
        if log:
            report.sections.append(("mediagen-mock log (last 50 lines)", "\n".join(log)))
